"""The depth and alias limits as validation rules.

Both measure an operation with its fragments expanded, without recursion and in time linear in
the document: each selection set (a fragment's included) is measured once, however often it is
spread, so neither a long chain of fragments nor fragments spread twice at every level (which
expand exponentially) can exhaust the stack or the CPU before the limit is enforced.
"""

from __future__ import annotations

from dataclasses import dataclass

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

__all__ = ["Measure", "limit_rule", "measure_operations"]


@dataclass(frozen=True)
class Measure:
    depth: int
    """Fields with a selection set nested in each other on the deepest path; introspection
    fields (``__schema``, ``__type``) are not counted."""
    aliases: int
    """Aliased fields, counting every expansion of a fragment."""


_Child = tuple[SelectionSetNode, int | None]
"""A nested selection set and the depth it adds: 1 under a field, 0 in a fragment, None under
an introspection field (whose depth is not counted, its aliases are)."""


def _children(
    selections: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode]
) -> tuple[list[_Child], int]:
    """The selection sets nested in ``selections``, and its own aliased fields."""
    children: list[_Child] = []
    aliases = 0
    for selection in selections.selections:
        if isinstance(selection, FieldNode):
            aliases += selection.alias is not None
            if selection.selection_set is not None:
                introspection = selection.name.value.startswith("__")
                children.append((selection.selection_set, None if introspection else 1))
        elif isinstance(selection, InlineFragmentNode):
            children.append((selection.selection_set, 0))
        elif isinstance(selection, FragmentSpreadNode):
            fragment = fragments.get(selection.name.value)
            if fragment is not None:  # an unknown fragment is another rule's error
                children.append((fragment.selection_set, 0))
    return children, aliases


def _measure(
    root: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode], memo: dict[int, Measure]
) -> Measure:
    """Depth-first, with an explicit stack; a selection set on the current path (a fragment
    cycle, which another rule rejects) counts as empty."""
    on_path: set[int] = set()
    stack: list[tuple[SelectionSetNode, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if key in memo or (key in on_path and not expanded):
            continue
        children, aliases = _children(node, fragments)
        if not expanded:
            on_path.add(key)
            stack.append((node, True))
            stack.extend(
                (child, False)
                for child, _ in children
                if id(child) not in memo and id(child) not in on_path
            )
            continue
        on_path.discard(key)
        measured = [(weight, memo.get(id(child), Measure(0, 0))) for child, weight in children]
        memo[key] = Measure(
            depth=max((w + m.depth for w, m in measured if w is not None), default=0),
            aliases=aliases + sum(m.aliases for _, m in measured),
        )
    return memo[id(root)]


def measure_operations(document: DocumentNode) -> dict[OperationDefinitionNode, Measure]:
    """Each operation of the document, measured."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    memo: dict[int, Measure] = {}
    return {
        d: _measure(d.selection_set, fragments, memo)
        for d in document.definitions
        if isinstance(d, OperationDefinitionNode)
    }


def limit_rule(*, max_depth: int, max_aliases: int) -> type[ValidationRule]:
    """A validation rule refusing an operation nested deeper than ``max_depth`` fields, or a
    document with more than ``max_aliases`` aliased fields in all."""

    class Limits(ValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            measured = measure_operations(context.document)
            for operation, measure in measured.items():
                if measure.depth > max_depth:
                    name = operation.name.value if operation.name else "anonymous"
                    context.report_error(
                        GraphQLError(
                            f"'{name}' exceeds maximum operation depth of {max_depth}",
                            operation,
                        )
                    )
            aliases = sum(m.aliases for m in measured.values())
            if aliases > max_aliases:
                context.report_error(
                    GraphQLError(f"{aliases} aliases found. Allowed: {max_aliases}")
                )

    return Limits
