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
selections), once per selection and type, as graphql-core memoises them. What a selection asks
of a type (its shape: response names, fields, and the same of each nested object) is written
as one Python function, made at the shape's first object and kept between executions (the
last :data:`COMPLETERS_KEPT` shapes): every field read, checked and coerced inline, without a
call per field. Whenever a value is
not at hand (a getter answers ``UNSETTLED``), would be an error (an exception, ``null`` for a
non-null field, a value the type does not coerce) or asks for deferred delivery, the whole
object is completed by graphql-core instead, from the start: the answer, errors and their
paths included, is then exactly graphql-core's, and the plain reads already made are read
again. So the answer is the same, byte for byte, either way (``tests/test_plain_execution.py``
compares them over generated documents).
"""

from __future__ import annotations

import keyword
from collections import OrderedDict
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

__all__ = ["COMPLETERS_KEPT", "PlainExecutionContext", "same_output"]

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

    def read(source: Any, _context: Any) -> Any:
        return get(source)

    if name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("__"):
        read.attribute = name  # type: ignore[attr-defined]  # read inline by a completer
    return read


def _method(function: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    def read(source: Any, _context: Any) -> Any:
        return function(source)

    read.method = function  # type: ignore[attr-defined]  # called directly by a completer
    return read


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


_Shape = tuple[GraphQLObjectType, tuple[tuple[str, str, "_Shape | None"], ...]]
"""What a selection asks of an object type: its fields in answer order, each as its response
name, its field's name and what it asks of the field's object type (None for a leaf, or an
object type asked for fields that are not all plain)."""

Completer = Callable[[Any, Any, "GraphQLResolveInfo[Any]"], Any]
"""An object's plain completion: its answer from the source object, the request's context
and the resolve info of the field that returned it; UNSETTLED when graphql-core must complete
it."""

_INLINE_SAME: dict[Callable[[Any], bool], str] = {
    _is_int: f"type({{v}}) is int and {_INT_MIN} <= {{v}} <= {_INT_MAX}",
    _is_text: "type({v}) is str",
    _is_flag: "type({v}) is bool",
    _is_long: f"type({{v}}) is int and 0 <= {{v}} <= {MAX_LONG}",
}
"""The checks of :func:`same_output`, written inline into a completer."""


COMPLETERS_KEPT = 512
"""How many shapes' completers are kept between executions (documents, and so shapes, are
the clients' to choose: the oldest used is dropped)."""

_COMPLETERS: OrderedDict[tuple[type, _Shape], Completer] = OrderedDict()


class _Source:
    """The text of one completer, and the values it refers to by name."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"UNSETTLED": UNSETTLED, "Undefined": Undefined}

    def name(self, prefix: str, value: Any) -> str:
        name = f"{prefix}{len(self.names)}"
        self.names[name] = value
        return name

    def add(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)


class PlainExecutionContext(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's execution, with plain objects completed directly (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._completers: dict[tuple[GraphQLObjectType, int], Completer | None] = {}
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
            complete = self._completer(return_type, field_details_list)
            if complete is not None:
                completed = complete(result, self.context_value, info)
                if completed is not UNSETTLED:
                    return completed
        return super().complete_object_value(
            return_type, field_details_list, info, path, result, position_context
        )

    def _completer(
        self, object_type: GraphQLObjectType, field_details_list: Any
    ) -> Completer | None:
        """The plain completion of ``object_type`` for this selection, or None when a field
        of it is not plain."""
        key = (object_type, id(field_details_list))
        try:
            return self._completers[key]
        except KeyError:
            pass
        # graphql-core memoises the collection by the identity of the list, and keeps the
        # list alive with it: the key's id stays this list's for the whole execution.
        shape = self._shape(object_type, field_details_list)
        completer = self._completers[key] = None if shape is None else self._compiled(shape)
        return completer

    def _shape(self, object_type: GraphQLObjectType, field_details_list: Any) -> _Shape | None:
        """What the selection asks of ``object_type``: its fields in answer order, each with
        what it asks of its own object type; None when a field is not plain or the selection
        defers delivery."""
        grouped, deferred, *_ = self.collect_subfields(object_type, field_details_list)
        if deferred:
            return None
        fields: list[tuple[str, str, _Shape | None]] = []
        for response_name, details in grouped.items():
            name = details[0].node.name.value
            nested = None
            if name != _TYPENAME:
                plain = _plain(object_type, name)
                if plain is None:
                    return None
                if plain.object_type is not None:
                    nested = self._shape(plain.object_type, details)
            fields.append((response_name, name, nested))
        return object_type, tuple(fields)

    def _compiled(self, shape: _Shape) -> Completer:
        """The completer of ``shape``, made once for every execution of this class (the last
        :data:`COMPLETERS_KEPT` shapes are kept)."""
        key = (type(self), shape)
        try:
            completer = _COMPLETERS[key]
        except KeyError:
            completer = _COMPLETERS[key] = self._compile(shape)
            while len(_COMPLETERS) > COMPLETERS_KEPT:
                _COMPLETERS.popitem(last=False)
        else:
            _COMPLETERS.move_to_end(key)
        return completer

    def _compile(self, shape: _Shape) -> Completer:
        """Write the object's completion as one function: each selected field read, checked
        and completed in answer order, a nested object by its own completer, and UNSETTLED
        for any value that is not at hand, would be an error, or is not what the generic
        walk of the field's type would answer."""
        object_type, fields = shape
        source = _Source()
        body: list[tuple[int, str]] = []
        answer: list[str] = []
        is_type_of = object_type.is_type_of
        if is_type_of is not None:
            test = source.name("t", is_type_of)
            body.append((0, f"if {test}(source, info) is not True:"))
            body.append((1, "return UNSETTLED"))
        for n, (response_name, name, nested_shape) in enumerate(fields):
            value = f"a{n}"
            answer.append(f"{source.name('n', response_name)}: {value}")
            if name == _TYPENAME:
                body.append((0, f"{value} = {source.name('s', object_type.name)}"))
                continue
            plain = _plain(object_type, name)
            assert plain is not None  # a shape holds plain fields only
            nested = None if nested_shape is None else self._compiled(nested_shape)
            body.extend(_field_lines(source, plain, value, nested))
        if not body:
            body.append((0, "pass"))  # every field skipped: the answer is empty
        source.add(0, "def complete(source, context, info):")
        source.add(1, "try:")
        for depth, line in body:
            source.add(2 + depth, line)
        source.add(1, "except Exception:  # graphql-core completes the object, raising the error")
        source.add(2, "return UNSETTLED")
        source.add(1, f"return {{{', '.join(answer)}}}")
        namespace = dict(source.names)
        # The text is the lines written above; every value it uses is bound by a name.
        exec("\n".join(source.lines), namespace)
        completer: Completer = namespace["complete"]
        return completer


def _field_lines(
    source: _Source, plain: _Plain, value: str, nested: Completer | None
) -> list[tuple[int, str]]:
    """The lines that read one field into ``value`` (or return UNSETTLED)."""
    lines: list[tuple[int, str]] = []
    read = plain.read
    attribute = getattr(read, "attribute", None)
    method = getattr(read, "method", None)
    if attribute is not None:
        lines.append((0, f"v = source.{attribute}"))
    elif method is not None:
        lines.append((0, f"v = {source.name('m', method)}(source)"))
    else:
        lines.append((0, f"v = {source.name('r', read)}(source, context)"))
    lines.append((0, "if v is UNSETTLED or isinstance(v, BaseException):"))
    lines.append((1, "return UNSETTLED"))
    lines.append((0, "if v is None or v is Undefined:"))
    lines.append((1, f"{value} = None" if plain.nullable else "return UNSETTLED"))
    lines.append((0, "else:"))
    if plain.members_nullable is None:
        lines += [(1 + d, line) for d, line in _member_lines(source, plain, "v", nested)]
        lines.append((1, f"{value} = v"))
        return lines
    # A list or tuple only: graphql-core takes any iterable, and reads it once.
    lines.append((1, "if type(v) is not list and type(v) is not tuple:"))
    lines.append((2, "return UNSETTLED"))
    lines.append((1, f"{value} = []"))
    lines.append((1, "for m in v:"))
    lines.append((2, "if m is None or m is Undefined:"))
    if plain.members_nullable:
        lines.append((3, f"{value}.append(None)"))
        lines.append((3, "continue"))
    else:
        lines.append((3, "return UNSETTLED"))
    lines += [(2 + d, line) for d, line in _member_lines(source, plain, "m", nested)]
    lines.append((2, f"{value}.append(m)"))
    return lines


def _member_lines(
    source: _Source, plain: _Plain, value: str, nested: Completer | None
) -> list[tuple[int, str]]:
    """The lines that complete a value known not to be null in place: a leaf coerced (unless
    its coercion answers it as it is), an object by its completer."""
    if plain.leaf is None:
        if nested is None:
            return [(0, "return UNSETTLED")]
        complete = source.name("c", nested)
        return [
            (0, f"{value} = {complete}({value}, context, info)"),
            (0, f"if {value} is UNSETTLED:"),
            (1, "return UNSETTLED"),
        ]
    coerce = source.name("k", plain.leaf.coerce_output_value)
    coerced = [
        (0, f"{value} = {coerce}({value})"),
        (0, f"if {value} is None or {value} is Undefined:"),
        (1, "return UNSETTLED"),
    ]
    if plain.same is None:
        return coerced
    check = _INLINE_SAME[plain.same]  # same_output answers one of these checks
    return [(0, f"if not ({check.format(v=value)}):")] + [(1 + d, line) for d, line in coerced]
