"""Cursor connections: pages of a list with an opaque cursor per item."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import strawberry

from dynamo.items import Item
from dynamo.reads import Page

__all__ = ["AFTER", "FIRST", "Connection", "Edge", "PageInfo", "connection"]

FIRST = "How many items to return: 0 to 100, default 20."
AFTER = "Return the items after this cursor (an endCursor or edge cursor of this list)."

T = TypeVar("T")


@strawberry.type(description="Where a page of a list ends. Lists page forward only.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="Whether items follow this page.")
    has_previous_page: bool = strawberry.field(
        description="Always false: lists are paged forward from the start with first/after."
    )
    page: strawberry.Private[Page[Any]]
    """The page whose first and end cursors these are (signed when they are read)."""

    @strawberry.field(description="The cursor of the first item.")
    def start_cursor(self) -> str | None:
        cursors = self.page.cursors
        return cursors[0] if cursors else None

    @strawberry.field(
        description="The cursor of the last item; pass it as `after` for the next page."
    )
    def end_cursor(self) -> str | None:
        return self.page.end_cursor


@strawberry.type(description="An item of a list with its cursor.")
class Edge(Generic[T]):
    item: strawberry.Private[T]
    cursors: strawberry.Private[Sequence[str]]
    """The cursors of the edge's page (signed when they are read)."""
    index: strawberry.Private[int]
    """The edge's place in its page."""

    @strawberry.field(description="Opaque position of this item in its list.")
    def cursor(self) -> str:
        return self.cursors[self.index]

    @strawberry.field(description="The item.")
    def node(self) -> T:
        return self.item


@strawberry.type(description="A page of a list (GraphQL Cursor Connections).")
class Connection(Generic[T]):
    edges: list[Edge[T]] = strawberry.field(description="The items of this page, in order.")
    page_info: PageInfo = strawberry.field(description="Where this page ends.")


ItemT = TypeVar("ItemT", bound=Item)


def connection(page: Page[ItemT], wrap: Callable[[ItemT], T]) -> Connection[T]:
    """The page as a connection, each cursor read from the page only when it is."""
    if len(page.cursors) != len(page.items):
        raise ValueError("a page has one cursor per item")
    edges = [Edge(item=wrap(i), cursors=page.cursors, index=n) for n, i in enumerate(page.items)]
    return Connection(
        edges=edges,
        page_info=PageInfo(has_next_page=page.has_next, has_previous_page=False, page=page),
    )
