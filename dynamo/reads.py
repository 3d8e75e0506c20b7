"""Reads of the table shared by the access patterns: items by key (GetItem, BatchGetItem in
chunks, each unprocessed key retried), key-condition Queries past DynamoDB's 1 MB pages, pages
with their cursors, and counts."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic

from botocore.exceptions import ClientError

from dynamo.cursors import CursorShape, LazyCursors, picked
from dynamo.db import Db
from dynamo.items import M, key, parse, serialize
from dynamo.keys import INDEX_ATTRIBUTES, Entity
from dynamo.table import Key

__all__ = [
    "BATCH_GET_LIMIT",
    "Page",
    "batch_get",
    "batch_get_immutable",
    "count",
    "get_items",
    "index_page",
    "query_items",
    "query_page",
    "query_run",
    "range_page",
]

BATCH_GET_LIMIT = 100
_UNPROCESSED_RETRIES = 8


@dataclass(frozen=True)
class Page(Generic[M]):
    """One page of a query: the items, one opaque cursor per item, and whether more follow."""

    items: list[M]
    cursors: Sequence[str]
    """One per item, in order: a page read from the table holds :class:`LazyCursors`, which
    sign each cursor only when it is read."""
    has_next: bool
    resume_after: str | None = None
    """Where the next page begins, when items read for this page were left out of it."""

    @property
    def end_cursor(self) -> str | None:
        if self.resume_after is not None:
            return self.resume_after
        return self.cursors[-1] if self.cursors else None

    def keeping(self, keep: Sequence[bool]) -> Page[M]:
        """The page with only the items whose ``keep`` is true; the next page still begins
        after the last item read. Raises ValueError unless ``keep`` has one flag per item."""
        if all(keep):
            return self
        if not len(self.items) == len(self.cursors) == len(keep):
            raise ValueError("a page keeps its items by one flag per item")
        positions = [n for n, k in enumerate(keep) if k]
        return Page(
            [self.items[n] for n in positions],
            picked(self.cursors, positions),
            self.has_next,
            resume_after=self.end_cursor,
        )


async def batch_get(db: Db, keys: Sequence[Key], *, consistent: bool = False) -> dict[Key, Any]:
    """Fetch items by primary key: GetItem for one key, BatchGetItem in chunks of 100 otherwise.

    Duplicate keys are fetched once; ``UnprocessedKeys`` are retried with backoff. Returns the
    raw items found, keyed by (pk, sk); missing keys are absent.
    """
    unique = list(dict.fromkeys(keys))
    if not unique:
        return {}
    if len(unique) == 1:
        pk, sk = unique[0]
        got = await db.get_item(TableName=db.table, Key=key(pk, sk), ConsistentRead=consistent)
        return {unique[0]: got["Item"]} if "Item" in got else {}
    chunks = [unique[i : i + BATCH_GET_LIMIT] for i in range(0, len(unique), BATCH_GET_LIMIT)]
    found: dict[Key, Any] = {}
    for part in await asyncio.gather(*(_batch_get_chunk(db, c, consistent) for c in chunks)):
        found.update(part)
    return found


async def get_items(
    db: Db,
    model: type[M],
    keys: Sequence[Key],
    *,
    immutable: bool = False,
    consistent: bool = False,
) -> list[M | None]:
    """The items of ``keys`` as ``model``, one result per key, in order, None where missing
    (through :func:`batch_get`, or :func:`batch_get_immutable` for items that never change);
    ``consistent``: read with ConsistentRead."""
    found = await (
        batch_get_immutable(db, keys) if immutable else batch_get(db, keys, consistent=consistent)
    )
    return [parse(model, found[k]) if k in found else None for k in keys]


async def batch_get_immutable(db: Db, keys: Sequence[Key]) -> dict[Key, Any]:
    """batch_get for items that never change: each is read from the table once per process."""
    found = {k: raw for k in keys if (raw := db.immutable.get(k)) is not None}
    fetched = await batch_get(db, [k for k in keys if k not in found])
    for k, raw in fetched.items():
        db.immutable.put(k, raw)
    return found | fetched


async def _batch_get_chunk(db: Db, keys: Sequence[Key], consistent: bool) -> dict[Key, Any]:
    found: dict[Key, Any] = {}
    request: Any = {
        db.table: {"Keys": [key(pk, sk) for pk, sk in keys], "ConsistentRead": consistent}
    }
    for attempt in range(_UNPROCESSED_RETRIES + 1):
        response = await db.batch_get_item(RequestItems=request)
        for raw in response.get("Responses", {}).get(db.table, []):
            found[(raw["pk"]["S"], raw["sk"]["S"])] = raw
        request = response.get("UnprocessedKeys") or {}
        if not request:
            return found
        if attempt < _UNPROCESSED_RETRIES:
            await asyncio.sleep(random.uniform(0, 0.05 * 2**attempt))
    raise ClientError(
        {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "unprocessed"}},
        "BatchGetItem",
    )


async def query_items(
    db: Db,
    *,
    key_condition: str,
    values: Mapping[str, Any],
    limit: int,
    index: str | None = None,
    descending: bool = True,
    start: Mapping[str, str] | None = None,
    filter_expression: str | None = None,
    consistent: bool = False,
) -> list[dict[str, Any]]:
    """Up to ``limit`` raw items of a key-condition Query, continuing past a 1 MB page (and,
    with ``filter_expression``, past pages whose items it filtered out); ``consistent``: with
    ConsistentRead (not on a global secondary index)."""
    items, _ = await query_run(
        db,
        key_condition=key_condition,
        values=values,
        limit=limit,
        index=index,
        descending=descending,
        start=start,
        filter_expression=filter_expression,
        consistent=consistent,
    )
    return items


async def query_run(
    db: Db,
    *,
    key_condition: str,
    values: Mapping[str, Any],
    limit: int,
    index: str | None = None,
    descending: bool = True,
    start: Mapping[str, str] | None = None,
    filter_expression: str | None = None,
    consistent: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, str] | None]:
    """:func:`query_items`, and where the Query stopped: the key attributes of its last call's
    ``LastEvaluatedKey`` (the ``start`` that goes on from there), or None when it read its
    range to the end."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {
        "TableName": db.table,
        "KeyConditionExpression": key_condition,
        "ExpressionAttributeValues": serialize(values),
        "ScanIndexForward": not descending,
    }
    if index is not None:
        kwargs["IndexName"] = index
    if start is not None:
        kwargs["ExclusiveStartKey"] = {k: {"S": v} for k, v in start.items()}
    if filter_expression is not None:
        kwargs["FilterExpression"] = filter_expression
    if consistent:
        kwargs["ConsistentRead"] = True
    last: dict[str, Any] | None = None
    while len(items) < limit:
        kwargs["Limit"] = limit - len(items)
        response = await db.query(**kwargs)
        items.extend(response.get("Items", []))
        last = response.get("LastEvaluatedKey") or None
        if last is None:
            break
        kwargs["ExclusiveStartKey"] = last
    return items, None if last is None else {k: v["S"] for k, v in last.items()}


async def range_page(
    db: Db,
    model: type[M],
    pk: str,
    prefix: str,
    first: int,
    after: str | None,
    *,
    consistent: bool = False,
) -> Page[M]:
    """One page of the items of partition ``pk`` whose sort key begins with ``prefix``, read
    descending (newest or best first); ``consistent``: with ConsistentRead."""
    return await query_page(
        db,
        model,
        key_condition="pk = :pk AND begins_with(sk, :prefix)",
        values={":pk": pk, ":prefix": prefix},
        cursor_shape=CursorShape(exact={"pk": pk}, prefixes={"sk": prefix}),
        first=first,
        after=after,
        consistent=consistent,
    )


async def query_page(
    db: Db,
    model: type[M],
    *,
    key_condition: str,
    values: Mapping[str, Any],
    cursor_shape: CursorShape,
    first: int,
    after: str | None,
    index: str | None = None,
    descending: bool = True,
    filter_expression: str | None = None,
    consistent: bool = False,
) -> Page[M]:
    """One page of a key-condition Query, reading one item more than asked to know if more follow.

    ``cursor_shape`` names every key attribute of the queried index with the value (partition)
    or prefix (sort) it must have; a cursor of any other shape is rejected.
    """
    start = db.cursors.decode(after, cursor_shape) if after is not None else None
    raw_items = await query_items(
        db,
        key_condition=key_condition,
        values=values,
        limit=first + 1,
        index=index,
        descending=descending,
        start=start,
        filter_expression=filter_expression,
        consistent=consistent,
    )
    shown = raw_items[:first]
    attributes = cursor_shape.attributes
    return Page(
        items=[parse(model, raw) for raw in shown],
        cursors=LazyCursors(db.cursors, shown, lambda raw: {k: raw[k]["S"] for k in attributes}),
        has_next=len(raw_items) > first,
    )


async def index_page(
    db: Db,
    model: type[M],
    entity: Entity,
    index: str,
    first: int,
    after: str | None,
    *,
    descending: bool,
    **values: object,
) -> Page[M]:
    """One page of ``entity``'s items in one partition of ``index`` (its index key filled
    with ``values``), in the order of their index sort keys, with cursors bound to that
    partition and to the entity's key shape."""
    ipk, isk = entity.indexes[index]
    pk_name, sk_name = INDEX_ATTRIBUTES[index]
    pk = ipk.fill(**values)
    return await query_page(
        db,
        model,
        key_condition=f"{pk_name} = :pk AND begins_with({sk_name}, :prefix)",
        values={":pk": pk, ":prefix": isk.prefix},
        cursor_shape=CursorShape(
            exact={pk_name: pk},
            prefixes={sk_name: isk.prefix, "pk": entity.pk.prefix, "sk": entity.sk.prefix},
        ),
        first=first,
        after=after,
        index=index,
        descending=descending,
    )


async def count(
    db: Db, *, key_condition: str, values: Mapping[str, Any], index: str | None = None
) -> int:
    """Count the items matching a key condition, following LastEvaluatedKey to the end."""
    kwargs: dict[str, Any] = {
        "TableName": db.table,
        "KeyConditionExpression": key_condition,
        "ExpressionAttributeValues": serialize(values),
        "Select": "COUNT",
    }
    if index is not None:
        kwargs["IndexName"] = index
    total = 0
    while True:
        response = await db.query(**kwargs)
        total += int(response["Count"])
        last = response.get("LastEvaluatedKey")
        if not last:
            return total
        kwargs["ExclusiveStartKey"] = last
