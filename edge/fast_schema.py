"""What :mod:`edge.fast_rules` looks up in a schema, derived once per schema: the fields each
composite type may select, the arguments each requires, the types that overlap, the names
each enum's own coercion accepts, and where Strawberry's MaybeNull and OneOf rules could refuse
a value."""

from __future__ import annotations

from typing import Any

from graphql import (
    EnumValueNode,
    GraphQLField,
    GraphQLNamedType,
    GraphQLSchema,
    OperationType,
    SchemaMetaFieldDef,
    TypeMetaFieldDef,
    TypeNameMetaFieldDef,
    do_types_overlap,
    get_named_type,
    is_input_object_type,
    is_interface_type,
    is_leaf_type,
    is_object_type,
    is_required_argument,
)
from graphql.pyutils import Undefined
from strawberry.types.base import StrawberryMaybe
from strawberry.utils.str_converters import to_camel_case

__all__ = [
    "NotSure",
    "SchemaLookups",
    "Selectable",
    "location_default",
    "lookups",
]


class NotSure(Exception):
    """The fast path cannot decide the document: the rules in full must."""


Selectable = tuple[GraphQLField, GraphQLNamedType, bool, bool]
"""A field of a type: its definition, its named type, whether that is a leaf type, and whether
the field is an introspection field (``__typename``, ``__schema``, ``__type``)."""


def location_default(definition: Any) -> Any:
    """The default of an argument or input field as graphql-core's TypeInfo gives it."""
    default = definition.default
    return default if default is not None else definition.default_value


class SchemaLookups:
    """What the walk looks up in a schema, derived once."""

    def __init__(self, schema: GraphQLSchema) -> None:
        self.schema = schema
        self.query = schema.query_type
        self.roots = {operation: schema.get_root_type(operation) for operation in OperationType}
        self.directives = {
            name: directive
            for name in ("include", "skip")
            if (directive := schema.get_directive(name)) is not None
        }
        self.overlaps: dict[tuple[int, int], bool] = {}
        self.selectable: dict[int, dict[str, Selectable]] = {}
        self.required: dict[int, tuple[str, ...]] = {}
        self.enums: dict[int, frozenset[str]] = {}
        self.maybe_arguments: set[int] = set()
        """Arguments Strawberry's MaybeNull rule may refuse null for (by id)."""
        self.maybe_fields: dict[int, frozenset[str]] = {}
        """Input fields it may refuse null for, by input type (by id)."""
        self.one_of: set[int] = set()
        for named in schema.type_map.values():
            fields = getattr(named, "fields", None) or {}
            if is_input_object_type(named):
                definition = named.extensions.get("strawberry-definition")
                if named.is_one_of or getattr(definition, "is_one_of", False):
                    self.one_of.add(id(named))
                maybe = frozenset(
                    field.graphql_name or name
                    for name, field in _strawberry_fields(definition)
                    if isinstance(field.type, StrawberryMaybe)
                )
                if maybe:
                    self.maybe_fields[id(named)] = maybe
                continue
            for field in fields.values():
                for argument in field.args.values():
                    definition = argument.extensions.get("strawberry-definition")
                    if isinstance(getattr(definition, "type", None), StrawberryMaybe):
                        self.maybe_arguments.add(id(argument))

    def fields(self, parent: GraphQLNamedType) -> dict[str, Selectable]:
        """The fields a selection set of ``parent`` may select, ``__typename`` included, and
        ``__schema`` and ``__type`` on the query root."""
        found = self.selectable.get(id(parent))
        if found is None:
            found = self.selectable[id(parent)] = {}
            fields: dict[str, GraphQLField] = (
                parent.fields if is_object_type(parent) or is_interface_type(parent) else {}
            )
            meta = {"__typename": TypeNameMetaFieldDef}
            if parent is self.query:
                meta.update(__schema=SchemaMetaFieldDef, __type=TypeMetaFieldDef)
            for name, definition in {**fields, **meta}.items():
                named = get_named_type(definition.type)
                found[name] = (definition, named, is_leaf_type(named), name in meta)
        return found

    def overlap(self, first: GraphQLNamedType, second: GraphQLNamedType) -> bool:
        if first is second:
            return True
        key = (id(first), id(second))
        found = self.overlaps.get(key)
        if found is None:
            found = self.overlaps[key] = do_types_overlap(self.schema, first, second)  # type: ignore[arg-type]
        return found

    def required_arguments(self, arguments: dict[str, Any]) -> tuple[str, ...]:
        found = self.required.get(id(arguments))
        if found is None:
            found = self.required[id(arguments)] = tuple(
                name for name, argument in arguments.items() if is_required_argument(argument)
            )
        return found

    def enum_names(self, enum: Any) -> frozenset[str]:
        """The names the enum's own coercion of a literal accepts."""
        found = self.enums.get(id(enum))
        if found is None:
            found = self.enums[id(enum)] = frozenset(
                name for name in enum.values if _coerces(enum, name)
            )
        return found


def _strawberry_fields(definition: Any) -> list[tuple[str, Any]]:
    """An input type's Strawberry fields by the GraphQL name they get by default."""
    fields = getattr(definition, "fields", None) or []
    return [(to_camel_case(field.python_name), field) for field in fields]


def _coerces(enum: Any, name: str) -> bool:
    try:
        return enum.coerce_input_literal(EnumValueNode(value=name), True) is not Undefined
    except Exception:
        return False


_SCHEMAS: dict[int, SchemaLookups] = {}


def lookups(schema: GraphQLSchema) -> SchemaLookups:
    found = _SCHEMAS.get(id(schema))
    if found is None or found.schema is not schema:
        found = _SCHEMAS[id(schema)] = SchemaLookups(schema)
    return found
