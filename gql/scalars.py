"""Custom scalars."""

from __future__ import annotations

from typing import Any, NewType

import strawberry
from graphql import IntValueNode, ValueNode
from strawberry.types.scalar import ScalarDefinition

__all__ = ["MAX_LONG", "SCALARS", "Long"]

MAX_LONG = 10**15 - 1
_RANGE = f"Long must be an integer between 0 and {MAX_LONG}"


def _check(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(_RANGE)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX_LONG:
        raise ValueError(_RANGE)
    return value


def _parse_literal(node: ValueNode, _variables: dict[str, Any] | None = None) -> int:
    if not isinstance(node, IntValueNode):
        raise ValueError(_RANGE)
    return _check(int(node.value))


Long = NewType("Long", int)

SCALARS: dict[object, ScalarDefinition] = {}
SCALARS[Long] = strawberry.scalar(
    name="Long",
    description=(
        "A non-negative integer up to 10^15 - 1, sent as a JSON number: exact in JavaScript, "
        "unlike a 64-bit integer."
    ),
    serialize=_check,
    parse_value=_check,
    parse_literal=_parse_literal,
)
