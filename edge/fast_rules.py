"""The specification's rules for a valid document, in one walk: "valid", or "not sure".

:func:`valid` walks a document once with the schema's types and answers True only when
:func:`edge.rules.run_rules` (``merge_work=`` the same bound) would find no error in it and
would not run out of merge work; anything it does not decide with certainty makes it answer
False, "not sure", and :func:`edge.validation.check_document` then runs the rules in full, which
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
depth, overlapping fields that can be merged (:class:`edge.merge_check.MergeCheck`, which counts
graphql-core's work and gives up past the bound), and Strawberry's MaybeNull and OneOf rules (a
null where a ``Maybe`` is taken, or any oneOf input, is "not sure").

It is not sure of a document with fragment variables, directives on operations, fragment
definitions or variable definitions, an empty selection set, a oneOf input type, a variable
inside a literal of a custom scalar, selections nested more than :data:`MAX_NESTING` deep in
one definition, or a subscription whose top level has fragments or directives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphql import (
    DirectiveLocation,
    DirectiveNode,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLNamedType,
    GraphQLSchema,
    InlineFragmentNode,
    NullValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    TypeNameMetaFieldDef,
    assert_valid_schema,
    is_composite_type,
    is_input_type,
    type_from_ast,
)
from graphql.pyutils import Undefined
from graphql.validation.rules.variables_in_allowed_position import allowed_variable_usage

from edge.fast_schema import NotSure, SchemaLookups, Selectable, location_default, lookups
from edge.fast_values import Usage, check_value
from edge.merge_check import MergeCheck

__all__ = ["MAX_NESTING", "merged", "valid"]

MAX_NESTING = 64
"""Most selection sets nested in each other within one definition that the walk follows (the
depth limit keeps an operation's to 10, counted through its fragments; deeper ones are
introspection fields, or unused fragments, which the rules refuse)."""

_INTROSPECTION_LISTS = frozenset(("fields", "interfaces", "possibleTypes", "inputFields"))
"""The fields graphql-core's MaxIntrospectionDepthRule counts below ``__schema`` and
``__type``: a path through 3 of them is refused."""
_MAX_INTROSPECTION_LISTS = 3


def valid(schema: GraphQLSchema, document: DocumentNode, merge_work: int) -> bool:
    """True when ``run_rules(schema, document, ..., merge_work=merge_work)`` finds no error and
    does not run out of merge work; False when not sure."""
    return merged(schema, document, merge_work) is not None


def merged(schema: GraphQLSchema, document: DocumentNode, merge_work: int) -> int | None:
    """The work OverlappingFieldsCanBeMerged does on a document :func:`valid` is sure of, in
    graphql-core's units; None when not sure."""
    assert_valid_schema(schema)  # as run_rules does
    try:
        return _Walk(lookups(schema), document).check(merge_work)
    except (NotSure, RecursionError):
        return None


class _Definition:
    """What one operation or fragment uses: variables where they are used, and the fragments
    it spreads."""

    __slots__ = ("spreads", "usages")

    def __init__(self) -> None:
        self.usages: list[Usage] = []
        self.spreads: set[str] = set()


class _Walk:
    def __init__(self, derived: SchemaLookups, document: DocumentNode) -> None:
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
                    raise NotSure
                fragments[name] = definition
                condition = self.schema.get_type(definition.type_condition.name.value)
                if condition is None or not is_composite_type(condition):
                    raise NotSure
                self.fragment_types[name] = condition
            else:
                raise NotSure
        names = [o.name.value for o in operations if o.name is not None]
        if len(names) != len(set(names)) or (len(operations) > 1 and len(names) < len(operations)):
            raise NotSure
        walked: dict[int, _Definition] = {}
        for definition in self.document.definitions:
            self.current = walked[id(definition)] = _Definition()
            if isinstance(definition, OperationDefinitionNode):
                root = self.derived.roots[definition.operation]
                if root is None or definition.directives:
                    raise NotSure
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
                    raise NotSure
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
            raise NotSure
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
                        raise NotSure
                    if not self.derived.overlap(named, parent):
                        raise NotSure
                    inner = named
                if node.directives:
                    self._directives(node.directives, DirectiveLocation.INLINE_FRAGMENT)
                self._selection_set(node.selection_set, inner, nesting + 1, inline=True)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                spread_type = self.fragment_types.get(name)
                if spread_type is None or node.arguments:
                    raise NotSure
                if not self.derived.overlap(spread_type, parent):
                    raise NotSure
                if node.directives:
                    self._directives(node.directives, DirectiveLocation.FRAGMENT_SPREAD)
                self.current.spreads.add(name)
            else:
                raise NotSure

    def _field(self, node: FieldNode, fields: dict[str, Selectable], nesting: int) -> None:
        found = fields.get(node.name.value)
        if found is None:
            raise NotSure
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
                raise NotSure
        elif nested is None:
            raise NotSure
        else:
            self._selection_set(nested, named, nesting + 1)

    def _directives(self, directives: Sequence[DirectiveNode], location: DirectiveLocation) -> None:
        seen: set[str] = set()
        for node in directives:
            name = node.name.value
            directive = self.derived.directives.get(name)
            if directive is None or location not in directive.locations:
                raise NotSure
            if not directive.is_repeatable:
                if name in seen:
                    raise NotSure
                seen.add(name)
            self._arguments(node.arguments, directive.args)

    def _arguments(self, nodes: Sequence[Any] | None, definitions: dict[str, Any]) -> None:
        seen: set[str] = set()
        for node in nodes or ():
            name = node.name.value
            definition = definitions.get(name)
            if definition is None or name in seen:
                raise NotSure
            seen.add(name)
            value = node.value
            if isinstance(value, NullValueNode) and id(definition) in self.derived.maybe_arguments:
                raise NotSure
            check_value(
                self.derived,
                value,
                definition.type,
                location_default(definition),
                self.current.usages,
            )
        if len(seen) < len(definitions):
            for name in self.derived.required_arguments(definitions):
                if name not in seen:
                    raise NotSure

    def _variable_definitions(self, operation: OperationDefinitionNode) -> None:
        seen: set[str] = set()
        for definition in operation.variable_definitions or ():
            name = definition.variable.name.value
            if name in seen or definition.directives:
                raise NotSure
            seen.add(name)
            expected = type_from_ast(self.schema, definition.type)
            if expected is None or not is_input_type(expected):
                raise NotSure
            if definition.default_value is not None:
                check_value(
                    self.derived, definition.default_value, expected, Undefined, self.current.usages
                )

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
                raise NotSure
            used.add(name)
            variable_type = type_from_ast(self.schema, definition.type)
            if variable_type is None or not allowed_variable_usage(
                self.schema, variable_type, definition.default_value, expected, default
            ):
                raise NotSure
        if len(used) < len(defined):
            raise NotSure

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


def _single_field(selections: SelectionSetNode) -> None:
    """A subscription selects one field at its top level: one response name, no
    introspection field, fields only and no directives."""
    names = set()
    for node in selections.selections:
        if not isinstance(node, FieldNode) or node.directives or node.name.value.startswith("__"):
            raise NotSure
        names.add((node.alias or node.name).value)
    if len(names) != 1:
        raise NotSure


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
        raise NotSure


def _no_cycle(name: str, spreads: dict[str, set[str]], done: set[str], path: list[str]) -> None:
    if name in done:
        return
    if name in path:
        raise NotSure
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
