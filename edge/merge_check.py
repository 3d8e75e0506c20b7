"""OverlappingFieldsCanBeMerged for documents it finds no conflict in, with its work counted.

graphql-core's rule (``graphql/validation/rules/overlapping_fields_can_be_merged.py``, 3.3)
compares the fields of one response name in pairs, and the fields below each pair with
selections, memoizing some comparisons and not others; :data:`edge.limits.MAX_MERGE_WORK` bounds
it in graphql-core's own units of work. :class:`MergeCheck` makes the same comparisons in the
same order with the same memos, and counts the same units, for a document whose fragments take
no arguments (fragment arguments are an experimental syntax the service's parser does not
accept) and whose fields carry no ``@stream``: it raises :class:`edge.fast_schema.NotSure` at
the first conflict it meets or as soon as the work passes its bound, and otherwise ends with
the work graphql-core's rule does on the document (tests/test_fast_rules.py compares them). It
skips the costs that do not count: a selection set whose fields all have distinct response
names, or whose repeated ones are plain leaves of one name, is compared without collecting its
fields.
"""

from __future__ import annotations

from typing import Any

from graphql import (
    BooleanValueNode,
    EnumValueNode,
    FieldNode,
    FloatValueNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLNamedType,
    GraphQLOutputType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    ListValueNode,
    NullValueNode,
    ObjectValueNode,
    SelectionSetNode,
    StringValueNode,
    ValueNode,
    VariableNode,
    get_named_type,
    is_interface_type,
    is_leaf_type,
    is_list_type,
    is_non_null_type,
    is_object_type,
)

from edge.fast_schema import NotSure

__all__ = ["MergeCheck"]


class _Field:
    """A field as the rule collects it for one parent type (its ``FieldDetails``), with what
    comparing it reads."""

    __slots__ = ("below", "name", "node", "object_parent", "parent", "simple", "type")

    def __init__(
        self,
        parent: GraphQLNamedType | None,
        object_parent: bool,
        node: FieldNode,
        definition: GraphQLField | None,
    ) -> None:
        self.parent = parent
        self.object_parent = object_parent
        self.node = node
        self.name = node.name.value
        self.type: GraphQLOutputType | None = definition.type if definition else None
        self.simple = not node.arguments and node.selection_set is None
        self.below: _Collected | None = None
        """Its selection set's fields, once collected."""


class _Collected:
    """A selection set's fields by response name, its inline fragments' included, and the
    fragments it spreads (the rule's ``CollectFieldsResult``)."""

    __slots__ = ("fields", "overlaps", "resolved", "spreads")

    def __init__(self) -> None:
        self.fields: dict[str, list[_Field]] = {}
        self.spreads: list[str] = []
        self.resolved: list[FragmentDefinitionNode] | None = None
        self.overlaps: dict[int, list[tuple[str, list[_Field], list[_Field]]]] = {}


def _value_key(node: ValueNode) -> Any:
    """What the rule compares of an argument's value (its ``get_value_structure``)."""
    if isinstance(node, VariableNode):
        return ("Variable", node.name.value)
    if isinstance(node, ObjectValueNode):
        fields = sorted(node.fields, key=lambda field: field.name.value)
        return ("ObjectValue", tuple((f.name.value, _value_key(f.value)) for f in fields))
    if isinstance(node, ListValueNode):
        return ("ListValue", tuple(_value_key(value) for value in node.values))
    if isinstance(node, StringValueNode):
        return ("StringValue", node.value, node.block is True)
    if isinstance(node, NullValueNode):
        return ("NullValue",)
    for kind in (BooleanValueNode, EnumValueNode, FloatValueNode, IntValueNode):
        if isinstance(node, kind):
            return (kind.__name__, node.value)
    raise NotSure


def _types_conflict(check: MergeCheck, type1: GraphQLOutputType, type2: GraphQLOutputType) -> bool:
    """The rule's ``do_types_conflict``, counting its work."""
    if type1 is type2:
        return False
    check.spend(1)
    if is_list_type(type1):
        return _types_conflict(check, type1.of_type, type2.of_type) if is_list_type(type2) else True
    if is_list_type(type2):
        return True
    if is_non_null_type(type1):
        if is_non_null_type(type2):
            return _types_conflict(check, type1.of_type, type2.of_type)
        return True
    if is_non_null_type(type2):
        return True
    if is_leaf_type(type1) or is_leaf_type(type2):
        return type1 is not type2
    return False


class MergeCheck:
    """The rule over one document: :meth:`selection_set` for each selection set it visits, in
    the order it visits them; :attr:`work` is the work done so far."""

    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: dict[str, FragmentDefinitionNode],
        fragment_types: dict[str, GraphQLNamedType],
        budget: int,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.fragment_types = fragment_types
        self.budget = budget
        self.work = 0
        self.collected: dict[tuple[int, int], _Collected] = {}
        self.fields_and_fragments: dict[tuple[int, int], bool] = {}
        """Pairs of collected fields and fragment compared, and whether as mutually
        exclusive (the rule's ordered pair set)."""
        self.fragment_pairs: dict[tuple[int, int], bool] = {}
        """Pairs of fragments compared, as the rule adds them (it looks them up both ways)."""
        self.arguments_compared: set[tuple[int, int]] = set()
        """Pairs of fields whose arguments were compared (found equal)."""

    def spend(self, units: int) -> None:
        self.work += units
        if self.work > self.budget:
            raise NotSure

    def selection_set(self, parent: GraphQLNamedType, selections: SelectionSetNode) -> None:
        """What the rule does on entering a selection set not of an inline fragment."""
        nodes = selections.selections
        if len(nodes) <= 1 and not (nodes and isinstance(nodes[0], InlineFragmentNode)):
            return
        if self._plain(parent, nodes):
            return
        collected = self._collect(parent, selections)
        self._within(collected)
        spreads = collected.spreads
        if spreads and (collected.fields or len(spreads) > 1):
            resolved = self._resolve(collected)
            for i, fragment in enumerate(resolved):
                self._fields_and_fragment(False, collected, fragment)
                for other in resolved[i + 1 :]:
                    self._fragments(False, fragment, other)

    def _plain(self, parent: GraphQLNamedType, nodes: Any) -> bool:
        """Whether the selection set is fields only, each response name once or repeated as
        plain leaves of one name (compared at 2 units a pair, nothing else): then its
        comparisons are counted here, without collecting its fields."""
        seen: dict[str, FieldNode] = {}
        repeated: dict[str, int] = {}
        for node in nodes:
            if node.__class__ is not FieldNode:
                return False
            key = (node.alias or node.name).value
            first = seen.get(key)
            if first is None:
                seen[key] = node
                continue
            if (
                node.arguments
                or node.selection_set is not None
                or first.arguments
                or first.selection_set is not None
                or node.name.value != first.name.value
            ):
                return False
            repeated[key] = repeated.get(key, 1) + 1
        for count in repeated.values():
            self.spend(count * (count - 1))
        return True

    def _collect(self, parent: GraphQLNamedType | None, selections: SelectionSetNode) -> _Collected:
        key = (id(parent), id(selections))
        found = self.collected.get(key)
        if found is None:
            found = self.collected[key] = _Collected()
            self._gather(parent, selections, found)
        return found

    def _gather(
        self, parent: GraphQLNamedType | None, selections: SelectionSetNode, into: _Collected
    ) -> None:
        definitions = parent.fields if is_object_type(parent) or is_interface_type(parent) else {}
        object_parent = is_object_type(parent)
        fields = into.fields
        for node in selections.selections:
            if isinstance(node, FieldNode):
                name = node.name.value
                key = node.alias.value if node.alias else name
                field = _Field(parent, object_parent, node, definitions.get(name))
                found = fields.get(key)
                if found is None:
                    fields[key] = [field]
                else:
                    found.append(field)
            elif isinstance(node, FragmentSpreadNode):
                into.spreads.append(node.name.value)
            elif isinstance(node, InlineFragmentNode):
                condition = node.type_condition
                inner = (
                    self.schema.get_type(condition.name.value) if condition is not None else parent
                )
                self._gather(inner, node.selection_set, into)

    def _resolve(self, collected: _Collected) -> list[FragmentDefinitionNode]:
        """The fragments a collection spreads, each once (the rule's ``get_fragment_spreads``,
        1 unit a spread the first time)."""
        resolved = collected.resolved
        if resolved is None:
            self.spend(len(collected.spreads))
            by_name = {name: self.fragments[name] for name in collected.spreads}
            resolved = collected.resolved = list(by_name.values())
        return resolved

    def _fragment(self, fragment: FragmentDefinitionNode) -> _Collected:
        return self._collect(self.fragment_types[fragment.name.value], fragment.selection_set)

    def _within(self, collected: _Collected) -> None:
        for name, fields in collected.fields.items():
            if len(fields) > 1:
                for i, field in enumerate(fields):
                    for other in fields[i + 1 :]:
                        self._conflict(False, name, field, other)

    def _fields_and_fragment(
        self, exclusive: bool, collected: _Collected, fragment: FragmentDefinitionNode
    ) -> None:
        self.spend(1)
        if not collected.fields:
            return
        key = (id(collected), id(fragment))
        seen = self.fields_and_fragments.get(key)
        if seen is not None and (exclusive or not seen):
            return
        self.fields_and_fragments[key] = exclusive
        collected2 = self._fragment(fragment)
        referenced = self._resolve(collected2)
        if collected is collected2:
            return
        self._between(exclusive, collected, collected2)
        for other in referenced:
            self._fields_and_fragment(exclusive, collected, other)

    def _fragments(
        self, exclusive: bool, fragment1: FragmentDefinitionNode, fragment2: FragmentDefinitionNode
    ) -> None:
        self.spend(2)
        if fragment1 is fragment2:
            return
        pairs = self.fragment_pairs
        for key in ((id(fragment1), id(fragment2)), (id(fragment2), id(fragment1))):
            seen = pairs.get(key)
            if seen is not None and (exclusive or not seen):
                return
        pairs[(id(fragment1), id(fragment2))] = exclusive
        collected1 = self._fragment(fragment1)
        referenced1 = self._resolve(collected1)
        collected2 = self._fragment(fragment2)
        referenced2 = self._resolve(collected2)
        self._between(exclusive, collected1, collected2)
        for other in referenced2:
            self._fragments(exclusive, fragment1, other)
        for other in referenced1:
            self._fragments(exclusive, other, fragment2)

    def _below(self, field: _Field, selections: SelectionSetNode) -> _Collected:
        below = field.below
        if below is None:
            below = field.below = self._collect(get_named_type(field.type), selections)
        return below

    def _sub_selection_sets(
        self, exclusive: bool, collected1: _Collected, collected2: _Collected
    ) -> None:
        resolved1 = self._resolve(collected1)
        resolved2 = self._resolve(collected2)
        self._between(exclusive, collected1, collected2)
        for fragment in resolved2:
            self._fields_and_fragment(exclusive, collected1, fragment)
        for fragment in resolved1:
            self._fields_and_fragment(exclusive, collected2, fragment)
        for fragment1 in resolved1:
            for fragment2 in resolved2:
                self._fragments(exclusive, fragment1, fragment2)

    def _between(self, exclusive: bool, collected1: _Collected, collected2: _Collected) -> None:
        if not collected1.fields or not collected2.fields:
            return
        for name, fields1, fields2 in self._overlaps(collected1, collected2):
            for field1 in fields1:
                for field2 in fields2:
                    self._conflict(exclusive, name, field1, field2)

    def _overlaps(
        self, collected1: _Collected, collected2: _Collected
    ) -> list[tuple[str, list[_Field], list[_Field]]]:
        found = collected1.overlaps.get(id(collected2))
        if found is None:
            found = []
            fields2 = collected2.fields
            for name, fields1 in collected1.fields.items():
                self.spend(1)
                others = fields2.get(name)
                if others:
                    found.append((name, fields1, others))
            collected1.overlaps[id(collected2)] = found
        return found

    def _conflict(self, exclusive: bool, name: str, field1: _Field, field2: _Field) -> None:
        """The rule's ``find_conflict``, raising :class:`edge.fast_schema.NotSure` where it
        finds one."""
        exclusive = exclusive or (
            field1.parent is not field2.parent and field1.object_parent and field2.object_parent
        )
        type1, type2 = field1.type, field2.type
        self.work += 2
        if self.work > self.budget:
            raise NotSure
        same_name = field1.name == field2.name
        if field1.simple and field2.simple and type1 is type2 and same_name:
            return
        if not exclusive:
            if not same_name:
                raise NotSure
            pair = (id(field1), id(field2))
            if pair not in self.arguments_compared:
                self._same_arguments(field1.node, field2.node)
                self.arguments_compared.add(pair)
        if (
            type1 is not None
            and type2 is not None
            and type1 is not type2
            and _types_conflict(self, type1, type2)
        ):
            raise NotSure
        selections1, selections2 = field1.node.selection_set, field2.node.selection_set
        if selections1 is not None and selections2 is not None:
            self._sub_selection_sets(
                exclusive, self._below(field1, selections1), self._below(field2, selections2)
            )

    def _same_arguments(self, node1: FieldNode, node2: FieldNode) -> None:
        """The rule's ``compare_arguments`` (1 unit an argument compared), raising
        :class:`edge.fast_schema.NotSure` where they differ."""
        arguments1, arguments2 = node1.arguments, node2.arguments
        if not arguments1:
            if arguments2:
                raise NotSure
            return
        if not arguments2 or len(arguments1) != len(arguments2):
            raise NotSure
        values2 = {argument.name.value: argument.value for argument in arguments2}
        for argument in arguments1:
            self.spend(1)
            value2 = values2.get(argument.name.value)
            if value2 is None or _value_key(argument.value) != _value_key(value2):
                raise NotSure
