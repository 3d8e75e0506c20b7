"""Custom scalars."""

from __future__ import annotations

from typing import Any, NewType

import strawberry
from graphql import IntValueNode, ValueNode, value_from_ast_untyped
from strawberry.types.scalar import ScalarDefinition

__all__ = ["JSON", "MAX_LONG", "SCALARS", "Long", "long_output"]

MAX_LONG = 10**15 - 1
"""Largest ``Long``: 15 digits, exact as a JSON number in JavaScript."""
_RANGE = f"Long must be an integer between 0 and {MAX_LONG}"


def _check(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(_RANGE)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX_LONG:
        raise ValueError(_RANGE)
    return value


long_output = _check
"""How a ``Long`` is coerced for output."""


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


JSON = NewType("JSON", object)
"""Any JSON value, passed through as read: the field or input that takes it checks it."""


def _same(value: Any) -> Any:
    """A JSON value as it is sent or received (variables arrive already parsed)."""
    return value


def _json_literal(node: ValueNode, variables: dict[str, Any] | None = None) -> Any:
    """A JSON value written in the document, any variable in it replaced by its value."""
    return value_from_ast_untyped(node, variables)


SCALARS[JSON] = strawberry.scalar(
    name="JSON",
    description=(
        "Any JSON value: an object, an array, a string, a number, a boolean or null, sent and "
        "received as JSON. Fields of this type say which values they accept."
    ),
    serialize=_same,
    parse_value=_same,
    parse_literal=_json_literal,
)
