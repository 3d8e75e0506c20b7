"""Plain values of fields whose resolvers need the request: what :mod:`gql.execution` reads
for a field it completes without graphql-core's machinery.

A field without a resolver (an attribute), or whose resolver takes only ``self``, is read by
the execution directly. A field whose resolver takes ``info`` registers here a plain getter
of the source object and the request's context: it answers the field's value when that is at
hand, synchronously and without error, and :data:`UNSETTLED` otherwise (the value must be
loaded, or reading it raises): then the object is completed by graphql-core, through the
field's own resolver. A getter may run and be followed by the resolver, so it only reads (and
records the same dependencies as the resolver does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from resolvers.context import Context

__all__ = ["PLAIN_GETTERS", "UNSETTLED", "Getter", "plain_getter"]


class _Unsettled:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSETTLED"


UNSETTLED: Final = _Unsettled()
"""What a plain getter answers when the field's value is not at hand."""

Getter = Callable[[Any, Context], Any]
"""A plain getter: the field's value on a source object, or :data:`UNSETTLED`."""

PLAIN_GETTERS: dict[tuple[str, str], Getter] = {}
"""The plain getters, by GraphQL type name and field name."""


def plain_getter(type_name: str, field_name: str) -> Callable[[Getter], Getter]:
    """Register the decorated function as the plain getter of ``type_name.field_name``."""

    def register(getter: Getter) -> Getter:
        PLAIN_GETTERS[(type_name, field_name)] = getter
        return getter

    return register
