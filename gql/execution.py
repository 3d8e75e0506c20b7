"""Execution that completes plain objects without graphql-core's per-field machinery.

graphql-core completes every field of every object the same way: it builds a resolve info,
coerces the field's arguments, calls the field's resolver through Strawberry's wrapping
(which builds Strawberry's own info), and walks the field's type to complete the value. For
a page of 100 entries that is about 700 fields, and most of the page's CPU, while nearly all
of them are attributes of objects already at hand.

:class:`PlainExecutionContext` completes an object itself when every field selected of it
is plain:

- ``__typename``, an attribute (a field without a resolver), a resolver taking only
  ``self``, or a field with a plain getter (:mod:`gql.plain`), none of them with arguments;
- of a leaf type (coerced by the type, as graphql-core does), of an object type that is
  itself completed so, or a list of either (a Python list or tuple), nullable or not.

Fields are collected by graphql-core (fragments, ``@skip`` and ``@include``, aliases, merged
selections), once per selection and type, as graphql-core memoises them. Whenever a value is
not at hand (a getter answers ``UNSETTLED``), would be an error (an exception, ``null`` for a
non-null field, a value the type does not coerce) or asks for deferred delivery, the whole
object is completed by graphql-core instead, from the start: the answer, errors and their
paths included, is then exactly graphql-core's, and the plain reads already made are read
again. So the answer is the same, byte for byte, either way (``tests/test_plain_execution.py``
compares them over generated documents).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from graphql import (
    GraphQLBoolean,
    GraphQLField,
    GraphQLID,
    GraphQLInt,
    GraphQLLeafType,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    GraphQLString,
    Undefined,
    get_nullable_type,
    is_leaf_type,
    is_list_type,
    is_non_null_type,
    is_object_type,
)
from graphql.pyutils import Path
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

from gql.plain import PLAIN_GETTERS, UNSETTLED
from gql.scalars import MAX_LONG, long_output

__all__ = ["PlainExecutionContext", "same_output"]

_TYPENAME = "__typename"


@dataclass(frozen=True, slots=True)
class _Plain:
    """How one field of one object type is completed plainly."""

    read: Callable[[Any, Any], Any]
    """The field's value on a source object (given the request's context), or UNSETTLED."""
    nullable: bool
    leaf: GraphQLLeafType | None
    """The leaf type that coerces the value (of a list: of each member); None for an object
    type."""
    object_type: GraphQLObjectType | None
    members_nullable: bool | None = None
    """For a list of leaves or objects, whether a member may be null; None for a field that
    is not a list."""
    same: Callable[[Any], bool] | None = None
    """For a leaf type whose coercion answers some values as they are: whether a value is
    one of those (then it is not coerced)."""


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _is_int(value: Any) -> bool:
    return type(value) is int and _INT_MIN <= value <= _INT_MAX


def _is_text(value: Any) -> bool:
    return type(value) is str


def _is_flag(value: Any) -> bool:
    return type(value) is bool


def _is_long(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_LONG


def same_output(leaf: GraphQLLeafType) -> Callable[[Any], bool] | None:
    """Which values ``leaf``'s output coercion answers as they are, if it is one of the
    scalars whose coercion is known: an ``int`` in range for ``Int`` and ``Long``, a ``str``
    for ``String`` and ``ID``, a ``bool`` for ``Boolean``."""
    if leaf is GraphQLInt:
        return _is_int
    if leaf is GraphQLString or leaf is GraphQLID:
        return _is_text
    if leaf is GraphQLBoolean:
        return _is_flag
    if getattr(leaf, "coerce_output_value", None) is long_output:
        return _is_long
    return None


_FIELDS: dict[tuple[GraphQLObjectType, str], _Plain | None] = {}
"""How each field of each object type is completed plainly, None where it is not (the
schema's types live as long as the process)."""


def _attribute(name: str) -> Callable[[Any, Any], Any]:
    get = attrgetter(name)
    return lambda source, _context: get(source)


def _method(function: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda source, _context: function(source)


def _reader(
    definition: object, type_name: str, field_name: str
) -> Callable[[Any, Any], Any] | None:
    """The plain read of a field, or None when only its resolver can read it."""
    getter = PLAIN_GETTERS.get((type_name, field_name))
    if getter is not None:
        return getter
    if not isinstance(definition, StrawberryField) or definition.extensions:
        return None
    resolver = definition.base_resolver
    if resolver is None:
        return _attribute(definition.python_name)
    if (
        resolver.is_async
        or resolver.arguments
        or resolver.self_parameter is None
        or resolver.info_parameter is not None
        or resolver.root_parameter is not None
        or resolver.parent_parameter is not None
    ):
        return None
    function = resolver.wrapped_func
    if isinstance(function, staticmethod | classmethod):
        return None
    return _method(function)


def _plain_field(parent: GraphQLObjectType, name: str, field: GraphQLField) -> _Plain | None:
    if field.args:
        return None
    definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    read = _reader(definition, parent.name, name)
    if read is None:
        return None
    nullable = not is_non_null_type(field.type)
    named: GraphQLOutputType = get_nullable_type(field.type)  # type: ignore[assignment]
    members_nullable = None
    if is_list_type(named):
        member = named.of_type
        members_nullable = not is_non_null_type(member)
        named = get_nullable_type(member)
    if is_leaf_type(named):
        return _Plain(read, nullable, named, None, members_nullable, same_output(named))
    if is_object_type(named):
        return _Plain(read, nullable, None, named, members_nullable)
    return None  # lists of lists, interfaces and unions


def _plain(parent: GraphQLObjectType, name: str) -> _Plain | None:
    key = (parent, name)
    try:
        return _FIELDS[key]
    except KeyError:
        field = parent.fields.get(name)
        found = _FIELDS[key] = _plain_field(parent, name, field) if field else None
        return found


_Shape = list[tuple[str, _Plain | None, Any]]
"""An object's selected fields in answer order: response name, how the field is completed
(None for ``__typename``) and its own selection (a field details list)."""


class PlainExecutionContext(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's execution, with plain objects completed directly (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shapes: dict[tuple[GraphQLObjectType, int], _Shape | None] = {}
        # Middleware (an extension's ``resolve`` hook) wraps every resolver: none may be
        # skipped then.
        manager = self.middleware_manager
        self._plain_on = manager is None or not manager.middlewares

    def complete_object_value(
        self,
        return_type: GraphQLObjectType,
        field_details_list: Any,
        info: GraphQLResolveInfo[Any],
        path: Path,
        result: Any,
        position_context: Any,
    ) -> Any:
        if self._plain_on:
            completed = self._complete_plain(return_type, field_details_list, info, result)
            if completed is not UNSETTLED:
                return completed
        return super().complete_object_value(
            return_type, field_details_list, info, path, result, position_context
        )

    def _shape(self, object_type: GraphQLObjectType, field_details_list: Any) -> _Shape | None:
        key = (object_type, id(field_details_list))
        try:
            return self._shapes[key]
        except KeyError:
            pass
        # graphql-core memoises the collection by the identity of the list, and keeps the
        # list alive with it: the key's id stays this list's for the whole execution.
        grouped, deferred, *_ = self.collect_subfields(object_type, field_details_list)
        shape: _Shape | None = [] if not deferred else None
        for response_name, details in grouped.items() if shape is not None else ():
            name = details[0].node.name.value
            if name == _TYPENAME:
                shape.append((response_name, None, details))  # type: ignore[union-attr]
                continue
            plain = _plain(object_type, name)
            if plain is None:
                shape = None
                break
            shape.append((response_name, plain, details))  # type: ignore[union-attr]
        self._shapes[key] = shape
        return shape

    def _complete_plain(
        self,
        object_type: GraphQLObjectType,
        field_details_list: Any,
        info: GraphQLResolveInfo[Any],
        source: Any,
    ) -> Any:
        """The object's answer, or UNSETTLED when graphql-core must complete it."""
        shape = self._shape(object_type, field_details_list)
        if shape is None:
            return UNSETTLED
        try:
            is_type_of = object_type.is_type_of
            if is_type_of is not None and is_type_of(source, info) is not True:
                return UNSETTLED
            context = self.context_value
            answer: dict[str, Any] = {}
            for response_name, plain, details in shape:
                if plain is None:
                    answer[response_name] = object_type.name
                    continue
                value = plain.read(source, context)
                if value is UNSETTLED or isinstance(value, BaseException):
                    return UNSETTLED
                if value is None or value is Undefined:
                    if not plain.nullable:
                        return UNSETTLED
                    answer[response_name] = None
                elif plain.members_nullable is None:
                    completed = self._complete_member(plain, plain.nullable, details, info, value)
                    if completed is UNSETTLED:
                        return UNSETTLED
                    answer[response_name] = completed
                else:
                    # A list or tuple only: graphql-core takes any iterable, and reads it once.
                    if type(value) is not list and type(value) is not tuple:
                        return UNSETTLED
                    members = []
                    for member in value:
                        completed = self._complete_member(
                            plain, plain.members_nullable, details, info, member
                        )
                        if completed is UNSETTLED:
                            return UNSETTLED
                        members.append(completed)
                    answer[response_name] = members
        except Exception:  # graphql-core completes the object, raising the same error
            return UNSETTLED
        return answer

    def _complete_member(
        self,
        plain: _Plain,
        nullable: bool,
        details: Any,
        info: GraphQLResolveInfo[Any],
        value: Any,
    ) -> Any:
        """One value of a plain field (the field's, or one member of its list): null, a
        coerced leaf or a plainly completed object; UNSETTLED when graphql-core must complete
        it."""
        if value is None or value is Undefined:
            return None if nullable else UNSETTLED
        if plain.leaf is not None:
            same = plain.same
            if same is not None and same(value):
                return value
            coerced = plain.leaf.coerce_output_value(value)
            if coerced is None or coerced is Undefined:
                return UNSETTLED
            return coerced
        assert plain.object_type is not None
        return self._complete_plain(plain.object_type, details, info, value)
