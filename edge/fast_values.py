"""Literals against the input types expected where they are written, as graphql-core's
ValuesOfCorrectType, UniqueInputFieldNames and Strawberry's MaybeNull and OneOf rules check
them, for :mod:`edge.fast_rules`: :func:`check_value` raises :class:`edge.fast_schema.NotSure`
where a rule could refuse the literal, and notes each variable in it with the type and the
default at its position (what VariablesInAllowedPosition reads)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    BooleanValueNode,
    EnumValueNode,
    FloatValueNode,
    GraphQLBoolean,
    GraphQLError,
    GraphQLFloat,
    GraphQLID,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLInt,
    GraphQLNamedType,
    GraphQLString,
    IntValueNode,
    ListValueNode,
    NullValueNode,
    ObjectValueNode,
    StringValueNode,
    ValueNode,
    VariableNode,
    is_enum_type,
    is_input_object_type,
    is_list_type,
    is_non_null_type,
    is_required_input_field,
)
from graphql.pyutils import Undefined
from graphql.utilities import validate_input_literal

from edge.fast_schema import NotSure, SchemaLookups, location_default

__all__ = ["BUILT_IN", "MAX_VALUE_NESTING", "Usage", "check_value"]

_MIN_INT, _MAX_INT = -(2**31), 2**31 - 1

BUILT_IN: dict[GraphQLNamedType, Callable[[ValueNode], bool]] = {
    GraphQLInt: lambda node: (
        isinstance(node, IntValueNode) and _MIN_INT <= int(node.value) <= _MAX_INT
    ),
    GraphQLFloat: lambda node: isinstance(node, IntValueNode | FloatValueNode),
    GraphQLString: lambda node: isinstance(node, StringValueNode),
    GraphQLBoolean: lambda node: isinstance(node, BooleanValueNode),
    GraphQLID: lambda node: isinstance(node, StringValueNode | IntValueNode),
}
"""The literals graphql-core's built-in scalars accept (their ``coerce_input_literal``)."""

MAX_VALUE_NESTING = 32
"""Most lists and objects nested in each other in a value that the checks follow."""

Usage = tuple[str, GraphQLInputType, Any]
"""A variable where it is used: its name, the type expected there, and the default there
(graphql-core's ``Undefined`` for none)."""


def check_value(
    lookups: SchemaLookups,
    node: ValueNode,
    expected: Any,
    default: Any,
    usages: list[Usage],
    nesting: int = 0,
) -> None:
    """Checks a literal against the type expected where it is written, and notes the
    variables in it with the type and default at their position."""
    if isinstance(node, VariableNode):
        usages.append((node.name.value, expected, default))
        return
    if is_non_null_type(expected):
        if node.__class__ is NullValueNode:
            raise NotSure
        expected = expected.of_type
    if node.__class__ is NullValueNode:
        return
    if nesting > MAX_VALUE_NESTING:
        raise NotSure
    if is_list_type(expected):
        item = expected.of_type
        if not isinstance(node, ListValueNode):
            check_value(lookups, node, item, Undefined, usages, nesting + 1)
            return
        scalar = BUILT_IN.get(item.of_type if is_non_null_type(item) else item)
        if scalar is not None:
            for value in node.values:
                if value.__class__ is VariableNode or value.__class__ is NullValueNode:
                    check_value(lookups, value, item, Undefined, usages, nesting + 1)
                elif not scalar(value):
                    raise NotSure
            return
        for value in node.values:
            check_value(lookups, value, item, Undefined, usages, nesting + 1)
        return
    if is_input_object_type(expected):
        _input_object(lookups, node, expected, usages, nesting)
        return
    scalar = BUILT_IN.get(expected)
    if scalar is not None:
        if not scalar(node):
            raise NotSure
        return
    if is_enum_type(expected):
        if not isinstance(node, EnumValueNode) or node.value not in lookups.enum_names(expected):
            raise NotSure
        return
    _custom_scalar(node, expected)


def _input_object(
    lookups: SchemaLookups,
    node: ValueNode,
    expected: GraphQLInputObjectType,
    usages: list[Usage],
    nesting: int,
) -> None:
    if not isinstance(node, ObjectValueNode) or id(expected) in lookups.one_of:
        raise NotSure
    definitions = expected.fields
    maybe = lookups.maybe_fields.get(id(expected), frozenset())
    seen: set[str] = set()
    for field in node.fields:
        name = field.name.value
        definition = definitions.get(name)
        if definition is None or name in seen:
            raise NotSure
        seen.add(name)
        value = field.value
        if name in maybe and isinstance(value, NullValueNode):
            raise NotSure
        check_value(
            lookups, value, definition.type, location_default(definition), usages, nesting + 1
        )
    if len(seen) < len(definitions):
        for name, definition in definitions.items():
            if name not in seen and is_required_input_field(definition):
                raise NotSure


def _custom_scalar(node: ValueNode, expected: Any) -> None:
    """A literal of a scalar the schema defines, checked by graphql-core's own coercion:
    without variables in it, and with each object's fields named once."""
    _plain_literal(node, 0)
    errors: list[GraphQLError] = []
    validate_input_literal(
        node, expected, lambda error, _path: errors.append(error), None, None, True
    )
    if errors:
        raise NotSure


def _plain_literal(node: ValueNode, nesting: int) -> None:
    """A literal without variables, each object's fields named once."""
    if nesting > MAX_VALUE_NESTING or node.__class__ is VariableNode:
        raise NotSure
    if isinstance(node, ListValueNode):
        for value in node.values:
            _plain_literal(value, nesting + 1)
    elif isinstance(node, ObjectValueNode):
        names = {field.name.value for field in node.fields}
        if len(names) < len(node.fields):
            raise NotSure
        for field in node.fields:
            _plain_literal(field.value, nesting + 1)
