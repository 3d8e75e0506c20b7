"""The document limits, and the structural ones checked on a parsed document.

The structural limits (depth, aliases, operations, fragments, spreads and fields of one response
name per selection set) are measured in one pass over the selection sets written in the
document, each read once (one with fragments, once more to count its names in order), then in
steps over those measures: an operation's depth and aliases, and a selection set's fields of
each response name, count every expansion of a fragment, but each fragment is measured once
however often it is spread, without recursion over fields, so neither a long chain of fragments
nor fragments spread twice at every level (which expand exponentially) can exhaust the stack or
the CPU before a limit is enforced. A fragment spread inside itself (a cycle, which the
specification's rules refuse) counts as empty where it closes the cycle.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationContext,
    ValidationRule,
)

from dynamo.errors import ErrorCode

__all__ = [
    "MAX_ALIASES",
    "MAX_CHARACTERS",
    "MAX_DEPTH",
    "MAX_ERRORS",
    "MAX_FRAGMENTS",
    "MAX_MERGE_WORK",
    "MAX_OPERATIONS",
    "MAX_SAME_NAME",
    "MAX_SPREADS",
    "MAX_TOKENS",
    "Measure",
    "limit_rule",
    "measure_operations",
    "over_limit",
    "structural_errors",
]

MAX_TOKENS = 1000
"""Most lexical tokens in a document, as GraphQL Armor and Hive Gateway have it: a frontend's
fragments with Apollo Client's ``__typename`` in every selection set take several hundred, 40
aliased one-field boards (``a0: leaderboard(id: "x") { id }``) 442, GraphiQL's introspection
query 183."""
MAX_CHARACTERS = 12_000
"""Longest query text, refused before parsing (variables are not counted). A document as a
frontend prints it (two spaces of indentation a level) takes about 7 characters a token, so
this holds :data:`MAX_TOKENS` of them even nested to the depth limit, while bounding what the
lexer reads between tokens (comments, white space, long strings)."""
MAX_DEPTH = 10
"""Deepest selection nesting accepted (the deepest useful query nests 8)."""
MAX_ALIASES = 40
"""Most aliased fields in a document, counting every expansion of a fragment."""
MAX_OPERATIONS = 10
"""Most operations in one document."""
MAX_FRAGMENTS = 20
"""Most fragment definitions in one document."""
MAX_SPREADS = 8
"""Most fragment spreads in one selection set."""
MAX_SAME_NAME = MAX_SPREADS + 1
"""Most fields of one response name in one selection set, counting those its fragments bring:
as many fragments as a selection set may spread, each with the ``__typename`` (or ``id``) that
Apollo Client adds to every selection set, and the selection set's own."""
MAX_MERGE_WORK = 2000
"""Most work OverlappingFieldsCanBeMerged may do, in graphql-core's units (2 a pair of fields
compared): fields repeated inside repeated fields multiply its comparisons (5 ``sessions``, each
with 5 ``edges``, each with 5 ``node``, took about 40,000 units and 100 ms in 600 tokens), which
no per-selection-set count bounds. Every documented operation takes under 300."""
MAX_ERRORS = 10
"""Most errors reported for one document; the last one then says that validation stopped."""


@dataclass(frozen=True)
class Measure:
    depth: int
    """Fields with a selection set nested in each other on the deepest path; introspection
    fields (``__schema``, ``__type``) are not counted."""
    aliases: int
    """Aliased fields, counting every expansion of a fragment."""


_Child = tuple[SelectionSetNode, int | None, str | None]
"""A selection set nested in another, the depth it adds (1 under a field, 0 in a fragment, None
under an introspection field, whose depth is not counted, its aliases are), and the name of the
fragment whose selection set it is, when spread."""


@dataclass(frozen=True, slots=True)
class _Shape:
    """A selection set as the limits see it, its fragments not expanded."""

    children: tuple[_Child, ...]
    aliases: int
    """Its own aliased fields."""
    spreads: int
    entries: list[str | _Child]
    """In order, the response name of each of its fields, and each of its fragments (inline,
    or spread and defined)."""
    fragments: bool
    """Whether it has fragments."""


class _Document:
    """The selection sets written in a document, each measured once: in the order
    :func:`structural_errors` reports them (last definition first, a selection set before
    those nested in it, the last nested first)."""

    def __init__(self, document: DocumentNode) -> None:
        definitions = document.definitions
        self.operations = [d for d in definitions if isinstance(d, OperationDefinitionNode)]
        fragments = [d for d in definitions if isinstance(d, FragmentDefinitionNode)]
        self.fragment_count = len(fragments)
        self.fragments = {d.name.value: d for d in fragments}
        self.order: list[SelectionSetNode] = []
        self.shapes: dict[int, _Shape] = {}
        stack = [
            d.selection_set
            for d in definitions
            if isinstance(d, OperationDefinitionNode | FragmentDefinitionNode)
        ]
        while stack:
            selections = stack.pop()
            self.order.append(selections)
            self.shapes[id(selections)] = self._shape(selections, stack)

    def _shape(self, selections: SelectionSetNode, stack: list[SelectionSetNode]) -> _Shape:
        children: list[_Child] = []
        entries: list[str | _Child] = []
        aliases = spreads = 0
        fragments = False
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                field = selection
                alias = field.alias
                if alias is not None:
                    aliases += 1
                    entries.append(alias.value)
                else:
                    entries.append(field.name.value)
                nested = field.selection_set
                if nested is not None:
                    stack.append(nested)
                    depth = None if field.name.value.startswith("__") else 1
                    children.append((nested, depth, None))
            elif isinstance(selection, InlineFragmentNode):
                fragments = True
                stack.append(selection.selection_set)
                child: _Child = (selection.selection_set, 0, None)
                children.append(child)
                entries.append(child)
            elif isinstance(selection, FragmentSpreadNode):
                fragments = True
                spreads += 1
                name = selection.name.value
                fragment = self.fragments.get(name)
                if fragment is not None:  # an unknown fragment is another rule's error
                    child = (fragment.selection_set, 0, name)
                    children.append(child)
                    entries.append(child)
        return _Shape(tuple(children), aliases, spreads, entries, fragments)

    def measure(self, root: SelectionSetNode, memo: dict[int, tuple[int, int]]) -> Measure:
        """Depth-first, with an explicit stack; a selection set on the current path (a
        fragment cycle) counts as empty."""
        shapes = self.shapes
        on_path: set[int] = set()
        stack: list[tuple[SelectionSetNode, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            key = id(node)
            if key in memo or (key in on_path and not expanded):
                continue
            shape = shapes[key]
            if not expanded:
                on_path.add(key)
                stack.append((node, True))
                stack.extend(
                    (child, False)
                    for child, _, _ in shape.children
                    if id(child) not in memo and id(child) not in on_path
                )
                continue
            on_path.discard(key)
            depth, aliases = 0, shape.aliases
            for child, weight, _ in shape.children:
                child_depth, child_aliases = memo.get(id(child), (0, 0))
                aliases += child_aliases
                if weight is not None and weight + child_depth > depth:
                    depth = weight + child_depth
            memo[key] = (depth, aliases)
        depth, aliases = memo[id(root)]
        return Measure(depth, aliases)

    def names(
        self, selections: SelectionSetNode, memo: dict[int, dict[str, int]], on_path: set[str]
    ) -> dict[str, int]:
        """How many fields of each response name the selection set merges, its inline
        fragments and the fragments it spreads included (each expansion counted); memoized by
        selection set. A fragment on the current path counts as empty."""
        found = memo.get(id(selections))
        if found is not None:
            return found
        shape = self.shapes[id(selections)]
        names: dict[str, int] = {}
        if not shape.fragments:
            for name in cast("list[str]", shape.entries):
                names[name] = names.get(name, 0) + 1
        else:
            for entry in shape.entries:
                if isinstance(entry, str):
                    names[entry] = names.get(entry, 0) + 1
                    continue
                child, _, fragment = entry
                if fragment is not None:
                    if fragment in on_path:
                        continue
                    on_path.add(fragment)
                for key, count in self.names(child, memo, on_path).items():
                    names[key] = names.get(key, 0) + count
                if fragment is not None:
                    on_path.discard(fragment)
        memo[id(selections)] = names
        return names


def measure_operations(document: DocumentNode) -> list[tuple[OperationDefinitionNode, Measure]]:
    """Each operation of the document, in order, with its measure."""
    return _measured(_Document(document))


def _measured(shaped: _Document) -> list[tuple[OperationDefinitionNode, Measure]]:
    # Pairs, not a dict keyed by the operations: a node's hash is its whole subtree's.
    memo: dict[int, tuple[int, int]] = {}
    return [(d, shaped.measure(d.selection_set, memo)) for d in shaped.operations]


def over_limit(
    code: ErrorCode, limit: int, message: str, node: OperationDefinitionNode | None = None
) -> GraphQLError:
    """A refusal by one of the limits: its code, and the limit."""
    return GraphQLError(message, node, extensions={"code": code.value, "limit": limit})


def structural_errors(document: DocumentNode) -> Iterator[GraphQLError]:
    """The document's breaches of the structural limits: the depth and alias limits first,
    then the counts of operations and fragment definitions, then each selection set's spreads
    and fields of one response name."""
    shaped = _Document(document)
    measured = _measured(shaped)
    for operation, measure in measured:
        if measure.depth > MAX_DEPTH:
            name = operation.name.value if operation.name else "anonymous"
            yield over_limit(
                ErrorCode.DEPTH_LIMIT_EXCEEDED,
                MAX_DEPTH,
                f"'{name}' exceeds maximum operation depth of {MAX_DEPTH}",
                operation,
            )
    aliases = sum(m.aliases for _, m in measured)
    if aliases > MAX_ALIASES:
        yield over_limit(
            ErrorCode.ALIAS_LIMIT_EXCEEDED,
            MAX_ALIASES,
            f"{aliases} aliases found. Allowed: {MAX_ALIASES}",
        )
    operations = len(shaped.operations)
    if operations > MAX_OPERATIONS:
        yield over_limit(
            ErrorCode.OPERATION_LIMIT_EXCEEDED,
            MAX_OPERATIONS,
            f"{operations} operations found. Allowed: {MAX_OPERATIONS}",
        )
    if shaped.fragment_count > MAX_FRAGMENTS:
        yield over_limit(
            ErrorCode.FRAGMENT_LIMIT_EXCEEDED,
            MAX_FRAGMENTS,
            f"{shaped.fragment_count} fragment definitions found. Allowed: {MAX_FRAGMENTS}",
        )
        return  # counting through them is not needed to refuse the document
    memo: dict[int, dict[str, int]] = {}
    for selections in shaped.order:
        shape = shaped.shapes[id(selections)]
        if shape.spreads > MAX_SPREADS:
            yield over_limit(
                ErrorCode.SPREAD_LIMIT_EXCEEDED,
                MAX_SPREADS,
                f"{shape.spreads} fragment spreads in one selection set. Allowed: {MAX_SPREADS}",
            )
        if not shape.fragments and len(shape.entries) - len(set(shape.entries)) < MAX_SAME_NAME:
            continue  # no name can be over the limit: the most any has is 1 + the repeats
        names = shaped.names(selections, memo, set())
        if max(names.values(), default=0) <= MAX_SAME_NAME:
            continue
        for name, count in names.items():
            if count > MAX_SAME_NAME:
                yield over_limit(
                    ErrorCode.SAME_NAME_LIMIT_EXCEEDED,
                    MAX_SAME_NAME,
                    f"{count} fields named '{name}' in one selection set, fragments included."
                    f" Allowed: {MAX_SAME_NAME}",
                )


def limit_rule(*, max_depth: int, max_aliases: int) -> type[ValidationRule]:
    """A validation rule refusing an operation nested deeper than ``max_depth`` fields, or a
    document with more than ``max_aliases`` aliased fields in all."""

    class Limits(ValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            measured = measure_operations(context.document)
            for operation, measure in measured:
                if measure.depth > max_depth:
                    name = operation.name.value if operation.name else "anonymous"
                    context.report_error(
                        GraphQLError(
                            f"'{name}' exceeds maximum operation depth of {max_depth}",
                            operation,
                        )
                    )
            aliases = sum(m.aliases for _, m in measured)
            if aliases > max_aliases:
                context.report_error(
                    GraphQLError(f"{aliases} aliases found. Allowed: {max_aliases}")
                )

    return Limits
