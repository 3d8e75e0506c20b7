"""What a client selected below the field being resolved, so that a list can fetch, together
and before it is returned, what every item of it will be asked for."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from strawberry.types import Info
from strawberry.types.nodes import FragmentSpread, InlineFragment, SelectedField, Selection

__all__ = ["selected"]


def _fields(selections: Iterable[Selection]) -> Iterator[SelectedField]:
    """The fields of a selection set, fragments expanded."""
    for selection in selections:
        if isinstance(selection, SelectedField):
            yield selection
        elif isinstance(selection, FragmentSpread | InlineFragment):
            yield from _fields(selection.selections)


def selected(info: Info[Any, Any], *path: str) -> set[str]:
    """Names of the fields selected at ``path`` below the current field, e.g.
    ``selected(info, "edges", "node")`` on a connection."""
    level = [s for field in info.selected_fields for s in field.selections]
    for name in path:
        level = [s for field in _fields(level) if field.name == name for s in field.selections]
    return {field.name for field in _fields(level)}
