"""The specification's rules for a valid document, in one walk: "valid", or "not sure".

:func:`valid` walks a document once with the schema's types and answers True only when
:func:`gql.rules.run_rules` (``merge_work=`` the same bound) would find no error in it and
would not run out of merge work; anything it does not decide with certainty makes it answer
False, "not sure", and :func:`gql.validation.check_document` then runs the rules in full, which
find the errors and word them. So a document's outcome does not depend on which path decided
it, and every error a client sees is graphql-core's.

It decides the rules that a valid document of the schema meets: executable definitions, unique
operation names, a lone anonymous operation, single-field subscriptions (fields only at their
top level, without directives), known operation types, known type names, fragments on composite
types, variables of input types, scalar leafs, fields on the correct type (``__typename``
anywhere, ``__schema`` and ``__type`` on the query root), unique, known and used fragment names,
no fragment cycles, possible fragment spreads, unique variable names, no undefined and no
unused variables (an operation's own and those of the fragments it spreads, transitively),
known directives at their locations, unique per location (``@include`` and ``@skip``: any other
is "not sure"), known and unique argument names, provided required arguments, values of the
correct type (built-in scalars as graphql-core coerces them, Int's 32-bit range included;
enums; lists, a single value standing for a list of one; input objects with unique, known and
required fields; any other scalar through graphql-core's own coercion of the literal),
variables in allowed positions (with their defaults and the location's), the introspection
depth, overlapping fields that can be merged (:class:`gql.merge_check.MergeCheck`, which counts
graphql-core's work and gives up past the bound), and Strawberry's MaybeNull and OneOf rules (a
null where a ``Maybe`` is taken, or any oneOf input, is "not sure").

It is not sure of a document with fragment variables, directives on operations, fragment
definitions or variable definitions, an empty selection set, a oneOf input type, a variable
inside a literal of a custom scalar, selections nested more than :data:`MAX_NESTING` deep in
one definition, or a subscription whose top level has fragments or directives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from graphql import (
    BooleanValueNode,
    DirectiveLocation,
    DirectiveNode,
    DocumentNode,
    EnumValueNode,
    FieldNode,
    FloatValueNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLBoolean,
    GraphQLError,
    GraphQLField,
    GraphQLFloat,
    GraphQLID,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLInt,
    GraphQLNamedType,
    GraphQLSchema,
    GraphQLString,
    InlineFragmentNode,
    IntValueNode,
    ListValueNode,
    NullValueNode,
    ObjectValueNode,
    OperationDefinitionNode,
    OperationType,
    SchemaMetaFieldDef,
    SelectionSetNode,
    StringValueNode,
    TypeMetaFieldDef,
    TypeNameMetaFieldDef,
    ValueNode,
    VariableNode,
    assert_valid_schema,
    do_types_overlap,
    get_named_type,
    is_composite_type,
    is_enum_type,
    is_input_object_type,
    is_input_type,
    is_interface_type,
    is_leaf_type,
    is_list_type,
    is_non_null_type,
    is_object_type,
    is_required_argument,
    is_required_input_field,
    type_from_ast,
)
from graphql.pyutils import Undefined
from graphql.utilities import validate_input_literal
from graphql.validation.rules.variables_in_allowed_position import allowed_variable_usage
from strawberry.types.base import StrawberryMaybe
from strawberry.utils.str_converters import to_camel_case

from gql.merge_check import MergeCheck, Unsure

__all__ = ["MAX_NESTING", "merged", "valid"]

MAX_NESTING = 64
"""Most selection sets nested in each other within one definition that the walk follows (the
depth limit keeps an operation's to 10, counted through its fragments; deeper ones are
introspection fields, or unused fragments, which the rules refuse)."""

_MAX_VALUE_NESTING = 32
"""Most lists and objects nested in each other in a value that the walk follows."""

_INTROSPECTION_LISTS = frozenset(("fields", "interfaces", "possibleTypes", "inputFields"))
"""The fields graphql-core's MaxIntrospectionDepthRule counts below ``__schema`` and
``__type``: a path through 3 of them is refused."""
_MAX_INTROSPECTION_LISTS = 3

_MIN_INT, _MAX_INT = -(2**31), 2**31 - 1

_BUILT_IN: dict[GraphQLNamedType, Callable[[ValueNode], bool]] = {
    GraphQLInt: lambda node: (
        isinstance(node, IntValueNode) and _MIN_INT <= int(node.value) <= _MAX_INT
    ),
    GraphQLFloat: lambda node: isinstance(node, IntValueNode | FloatValueNode),
    GraphQLString: lambda node: isinstance(node, StringValueNode),
    GraphQLBoolean: lambda node: isinstance(node, BooleanValueNode),
    GraphQLID: lambda node: isinstance(node, StringValueNode | IntValueNode),
}
"""The literals graphql-core's built-in scalars accept (their ``coerce_input_literal``)."""

_Selectable = tuple[GraphQLField, GraphQLNamedType, bool, bool]
"""A field of a type: its definition, its named type, whether that is a leaf type, and whether
the field is an introspection field (``__typename``, ``__schema``, ``__type``)."""

_Usage = tuple[str, GraphQLInputType, Any]
"""A variable where it is used: its name, the type expected there, and the default there
(graphql-core's ``Undefined`` for none)."""


class _NotSure(Exception):
    pass


def _location_default(definition: Any) -> Any:
    """The default of an argument or input field as graphql-core's TypeInfo gives it."""
    default = definition.default
    return default if default is not None else definition.default_value


class _Schema:
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
        self.selectable: dict[int, dict[str, _Selectable]] = {}
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

    def fields(self, parent: GraphQLNamedType) -> dict[str, _Selectable]:
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


_SCHEMAS: dict[int, _Schema] = {}


def _derived(schema: GraphQLSchema) -> _Schema:
    found = _SCHEMAS.get(id(schema))
    if found is None or found.schema is not schema:
        found = _SCHEMAS[id(schema)] = _Schema(schema)
    return found


def valid(schema: GraphQLSchema, document: DocumentNode, merge_work: int) -> bool:
    """True when ``run_rules(schema, document, ..., merge_work=merge_work)`` finds no error and
    does not run out of merge work; False when not sure."""
    return merged(schema, document, merge_work) is not None


def merged(schema: GraphQLSchema, document: DocumentNode, merge_work: int) -> int | None:
    """The work OverlappingFieldsCanBeMerged does on a document :func:`valid` is sure of, in
    graphql-core's units; None when not sure."""
    assert_valid_schema(schema)  # as run_rules does
    try:
        return _Walk(_derived(schema), document).check(merge_work)
    except (_NotSure, Unsure, RecursionError):
        return None


class _Definition:
    """What one operation or fragment uses: variables where they are used, and the fragments
    it spreads."""

    __slots__ = ("spreads", "usages")

    def __init__(self) -> None:
        self.usages: list[_Usage] = []
        self.spreads: set[str] = set()


class _Walk:
    def __init__(self, derived: _Schema, document: DocumentNode) -> None:
        self.derived = derived
        self.schema = derived.schema
        self.document = document
        self.fragments: dict[str, FragmentDefinitionNode] = {}
        self.fragment_types: dict[str, GraphQLNamedType] = {}
        self.merged: list[tuple[GraphQLNamedType, SelectionSetNode]] = []
        """The selection sets OverlappingFieldsCanBeMerged visits, in its order."""
        self.introspection: list[FieldNode] = []
        self.current = _Definition()

    def check(self, merge_work: int) -> int:
        operations: list[OperationDefinitionNode] = []
        fragments = self.fragments
        for definition in self.document.definitions:
            if isinstance(definition, OperationDefinitionNode):
                operations.append(definition)
            elif isinstance(definition, FragmentDefinitionNode):
                name = definition.name.value
                if name in fragments or definition.variable_definitions or definition.directives:
                    raise _NotSure
                fragments[name] = definition
                condition = self.schema.get_type(definition.type_condition.name.value)
                if condition is None or not is_composite_type(condition):
                    raise _NotSure
                self.fragment_types[name] = condition
            else:
                raise _NotSure
        names = [o.name.value for o in operations if o.name is not None]
        if len(names) != len(set(names)) or (len(operations) > 1 and len(names) < len(operations)):
            raise _NotSure
        walked: dict[int, _Definition] = {}
        for definition in self.document.definitions:
            self.current = walked[id(definition)] = _Definition()
            if isinstance(definition, OperationDefinitionNode):
                root = self.derived.roots[definition.operation]
                if root is None or definition.directives:
                    raise _NotSure
                self._variable_definitions(definition)
                self._selection_set(definition.selection_set, root, 0)
                if definition.operation is OperationType.SUBSCRIPTION:
                    _single_field(definition.selection_set)
            elif isinstance(definition, FragmentDefinitionNode):
                condition = self.fragment_types[definition.name.value]
                self._selection_set(definition.selection_set, condition, 0)
        spreads = {name: walked[id(f)].spreads for name, f in fragments.items()}
        _fragments_used([walked[id(o)].spreads for o in operations], spreads)
        for operation in operations:
            self._variables(operation, walked, spreads)
        if self.introspection:
            memo: dict[int, int] = {}
            for field in self.introspection:
                if self._introspection_lists(field.selection_set, memo) >= _MAX_INTROSPECTION_LISTS:
                    raise _NotSure
        check = MergeCheck(self.schema, fragments, self.fragment_types, merge_work)
        for parent, selections in self.merged:
            check.selection_set(parent, selections)
        return check.work

    def _selection_set(
        self,
        selections: SelectionSetNode,
        parent: GraphQLNamedType,
        nesting: int,
        inline: bool = False,
    ) -> None:
        nodes = selections.selections
        if not nodes or nesting > MAX_NESTING:
            raise _NotSure
        if not inline:
            self.merged.append((parent, selections))
        fields = self.derived.fields(parent)
        for node in nodes:
            if isinstance(node, FieldNode):
                self._field(node, fields, nesting)
            elif isinstance(node, InlineFragmentNode):
                inner = parent
                if node.type_condition is not None:
                    named = self.schema.get_type(node.type_condition.name.value)
                    if named is None or not is_composite_type(named):
                        raise _NotSure
                    if not self.derived.overlap(named, parent):
                        raise _NotSure
                    inner = named
                if node.directives:
                    self._directives(node.directives, DirectiveLocation.INLINE_FRAGMENT)
                self._selection_set(node.selection_set, inner, nesting + 1, inline=True)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                spread_type = self.fragment_types.get(name)
                if spread_type is None or node.arguments:
                    raise _NotSure
                if not self.derived.overlap(spread_type, parent):
                    raise _NotSure
                if node.directives:
                    self._directives(node.directives, DirectiveLocation.FRAGMENT_SPREAD)
                self.current.spreads.add(name)
            else:
                raise _NotSure

    def _field(self, node: FieldNode, fields: dict[str, _Selectable], nesting: int) -> None:
        found = fields.get(node.name.value)
        if found is None:
            raise _NotSure
        definition, named, leaf, meta = found
        if meta and definition is not TypeNameMetaFieldDef:
            self.introspection.append(node)
        arguments = definition.args
        if node.arguments or arguments:
            self._arguments(node.arguments, arguments)
        if node.directives:
            self._directives(node.directives, DirectiveLocation.FIELD)
        nested = node.selection_set
        if leaf:
            if nested is not None:
                raise _NotSure
        elif nested is None:
            raise _NotSure
        else:
            self._selection_set(nested, named, nesting + 1)

    def _directives(self, directives: Sequence[DirectiveNode], location: DirectiveLocation) -> None:
        seen: set[str] = set()
        for node in directives:
            name = node.name.value
            directive = self.derived.directives.get(name)
            if directive is None or location not in directive.locations:
                raise _NotSure
            if not directive.is_repeatable:
                if name in seen:
                    raise _NotSure
                seen.add(name)
            self._arguments(node.arguments, directive.args)

    def _arguments(self, nodes: Sequence[Any] | None, definitions: dict[str, Any]) -> None:
        seen: set[str] = set()
        for node in nodes or ():
            name = node.name.value
            definition = definitions.get(name)
            if definition is None or name in seen:
                raise _NotSure
            seen.add(name)
            value = node.value
            if isinstance(value, NullValueNode) and id(definition) in self.derived.maybe_arguments:
                raise _NotSure
            self._value(value, definition.type, _location_default(definition), 0)
        if len(seen) < len(definitions):
            for name in self.derived.required_arguments(definitions):
                if name not in seen:
                    raise _NotSure

    def _value(self, node: ValueNode, expected: Any, default: Any, nesting: int) -> None:
        """Checks a literal against the type expected where it is written, and notes the
        variables in it with the type and default at their position."""
        if isinstance(node, VariableNode):
            self.current.usages.append((node.name.value, expected, default))
            return
        if is_non_null_type(expected):
            if node.__class__ is NullValueNode:
                raise _NotSure
            expected = expected.of_type
        if node.__class__ is NullValueNode:
            return
        if nesting > _MAX_VALUE_NESTING:
            raise _NotSure
        if is_list_type(expected):
            item = expected.of_type
            if not isinstance(node, ListValueNode):
                self._value(node, item, Undefined, nesting + 1)
                return
            scalar = _BUILT_IN.get(item.of_type if is_non_null_type(item) else item)
            if scalar is not None:
                for value in node.values:
                    if value.__class__ is VariableNode or value.__class__ is NullValueNode:
                        self._value(value, item, Undefined, nesting + 1)
                    elif not scalar(value):
                        raise _NotSure
                return
            for value in node.values:
                self._value(value, item, Undefined, nesting + 1)
            return
        if is_input_object_type(expected):
            self._input_object(node, expected, nesting)
            return
        scalar = _BUILT_IN.get(expected)
        if scalar is not None:
            if not scalar(node):
                raise _NotSure
            return
        if is_enum_type(expected):
            if not isinstance(node, EnumValueNode) or node.value not in self.derived.enum_names(
                expected
            ):
                raise _NotSure
            return
        self._custom_scalar(node, expected)

    def _input_object(
        self, node: ValueNode, expected: GraphQLInputObjectType, nesting: int
    ) -> None:
        if not isinstance(node, ObjectValueNode) or id(expected) in self.derived.one_of:
            raise _NotSure
        definitions = expected.fields
        maybe = self.derived.maybe_fields.get(id(expected), frozenset())
        seen: set[str] = set()
        for field in node.fields:
            name = field.name.value
            definition = definitions.get(name)
            if definition is None or name in seen:
                raise _NotSure
            seen.add(name)
            value = field.value
            if name in maybe and isinstance(value, NullValueNode):
                raise _NotSure
            self._value(value, definition.type, _location_default(definition), nesting + 1)
        if len(seen) < len(definitions):
            for name, definition in definitions.items():
                if name not in seen and is_required_input_field(definition):
                    raise _NotSure

    def _custom_scalar(self, node: ValueNode, expected: Any) -> None:
        """A literal of a scalar the schema defines, checked by graphql-core's own coercion:
        without variables in it, and with each object's fields named once."""
        _plain_literal(node, 0)
        errors: list[GraphQLError] = []
        validate_input_literal(
            node, expected, lambda error, _path: errors.append(error), None, None, True
        )
        if errors:
            raise _NotSure

    def _variable_definitions(self, operation: OperationDefinitionNode) -> None:
        seen: set[str] = set()
        for definition in operation.variable_definitions or ():
            name = definition.variable.name.value
            if name in seen or definition.directives:
                raise _NotSure
            seen.add(name)
            expected = type_from_ast(self.schema, definition.type)
            if expected is None or not is_input_type(expected):
                raise _NotSure
            if definition.default_value is not None:
                self._value(definition.default_value, expected, Undefined, 0)

    def _variables(
        self,
        operation: OperationDefinitionNode,
        walked: dict[int, _Definition],
        spreads: dict[str, set[str]],
    ) -> None:
        """The variables the operation and the fragments it spreads use are its own, each
        where its type is allowed, and each of its own is used."""
        reached: set[str] = set()
        _reach(walked[id(operation)].spreads, spreads, reached)
        usages = list(walked[id(operation)].usages)
        for name in reached:
            usages += walked[id(self.fragments[name])].usages
        defined = {d.variable.name.value: d for d in operation.variable_definitions or ()}
        used: set[str] = set()
        for name, expected, default in usages:
            definition = defined.get(name)
            if definition is None:
                raise _NotSure
            used.add(name)
            variable_type = type_from_ast(self.schema, definition.type)
            if variable_type is None or not allowed_variable_usage(
                self.schema, variable_type, definition.default_value, expected, default
            ):
                raise _NotSure
        if len(used) < len(defined):
            raise _NotSure

    def _introspection_lists(
        self, selections: SelectionSetNode | None, memo: dict[int, int]
    ) -> int:
        """The most introspection list fields on a path below ``selections``, through its
        fragments."""
        if selections is None:
            return 0
        found = memo.get(id(selections))
        if found is None:
            found = 0
            for node in selections.selections:
                if isinstance(node, FieldNode):
                    lists = node.name.value in _INTROSPECTION_LISTS
                    found = max(found, lists + self._introspection_lists(node.selection_set, memo))
                elif isinstance(node, InlineFragmentNode):
                    found = max(found, self._introspection_lists(node.selection_set, memo))
                elif isinstance(node, FragmentSpreadNode):
                    fragment = self.fragments[node.name.value].selection_set
                    found = max(found, self._introspection_lists(fragment, memo))
            memo[id(selections)] = found
        return found


def _plain_literal(node: ValueNode, nesting: int) -> None:
    """A literal without variables, each object's fields named once."""
    if nesting > _MAX_VALUE_NESTING or node.__class__ is VariableNode:
        raise _NotSure
    if isinstance(node, ListValueNode):
        for value in node.values:
            _plain_literal(value, nesting + 1)
    elif isinstance(node, ObjectValueNode):
        names = {field.name.value for field in node.fields}
        if len(names) < len(node.fields):
            raise _NotSure
        for field in node.fields:
            _plain_literal(field.value, nesting + 1)


def _single_field(selections: SelectionSetNode) -> None:
    """A subscription selects one field at its top level: one response name, no
    introspection field, fields only and no directives."""
    names = set()
    for node in selections.selections:
        if not isinstance(node, FieldNode) or node.directives or node.name.value.startswith("__"):
            raise _NotSure
        names.add((node.alias or node.name).value)
    if len(names) != 1:
        raise _NotSure


def _fragments_used(operations: list[set[str]], spreads: dict[str, set[str]]) -> None:
    """No fragment spreads itself, and every fragment is spread by an operation (``spreads``:
    the fragments each operation and each fragment spreads)."""
    done: set[str] = set()
    for name in spreads:
        _no_cycle(name, spreads, done, [])
    used: set[str] = set()
    for spread in operations:
        _reach(spread, spreads, used)
    if len(used) < len(spreads):
        raise _NotSure


def _no_cycle(name: str, spreads: dict[str, set[str]], done: set[str], path: list[str]) -> None:
    if name in done:
        return
    if name in path:
        raise _NotSure
    path.append(name)
    for spread in spreads[name]:
        _no_cycle(spread, spreads, done, path)
    path.pop()
    done.add(name)


def _reach(spreads: set[str], by_fragment: dict[str, set[str]], reached: set[str]) -> None:
    """Adds to ``reached`` the fragments ``spreads`` name and those they spread."""
    stack = list(spreads)
    while stack:
        name = stack.pop()
        if name not in reached:
            reached.add(name)
            stack.extend(by_fragment[name])
