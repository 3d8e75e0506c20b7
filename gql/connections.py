"""Cursor connections: pages of a list with an opaque cursor per item."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

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
    start_cursor: str | None = strawberry.field(description="The cursor of the first item.")
    end_cursor: str | None = strawberry.field(
        description="The cursor of the last item; pass it as `after` for the next page."
    )


@strawberry.type(description="An item of a list with its cursor.")
class Edge(Generic[T]):
    cursor: str = strawberry.field(description="Opaque position of this item in its list.")
    node: T = strawberry.field(description="The item.")


@strawberry.type(description="A page of a list (GraphQL Cursor Connections).")
class Connection(Generic[T]):
    edges: list[Edge[T]] = strawberry.field(description="The items of this page, in order.")
    page_info: PageInfo = strawberry.field(description="Where this page ends.")


ItemT = TypeVar("ItemT", bound=Item)


def connection(page: Page[ItemT], wrap: Callable[[ItemT], T]) -> Connection[T]:
    edges = [Edge(cursor=c, node=wrap(i)) for i, c in zip(page.items, page.cursors, strict=True)]
    return Connection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=page.has_next,
            has_previous_page=False,
            start_cursor=page.cursors[0] if page.cursors else None,
            end_cursor=page.end_cursor,
        ),
    )
