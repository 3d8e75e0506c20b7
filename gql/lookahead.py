"""What a client selected below the field being resolved, so that a resolver can fetch, together
and before it returns, what the fields below it will be asked for."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from strawberry.types import Info
from strawberry.types.nodes import FragmentSpread, InlineFragment, SelectedField, Selection

__all__ = ["selected", "selected_fields"]


def _fields(selections: Iterable[Selection]) -> Iterator[SelectedField]:
    """The fields of a selection set, fragments expanded."""
    for selection in selections:
        if isinstance(selection, SelectedField):
            yield selection
        elif isinstance(selection, FragmentSpread | InlineFragment):
            yield from _fields(selection.selections)


def selected_fields(info: Info[Any, Any], *path: str) -> list[SelectedField]:
    """The fields selected at ``path`` below the current field, fragments expanded, with their
    arguments (variables substituted), e.g. ``selected_fields(info, "edges", "node")`` on a
    connection."""
    level = [s for field in info.selected_fields for s in field.selections]
    for name in path:
        level = [s for field in _fields(level) if field.name == name for s in field.selections]
    return list(_fields(level))


def selected(info: Info[Any, Any], *path: str) -> set[str]:
    """Names of the fields selected at ``path`` below the current field."""
    return {field.name for field in selected_fields(info, *path)}
