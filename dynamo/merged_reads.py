"""Reads of one ordered list kept under several partition keys: a write-sharded board's Score
items (dynamo/scores.py), whose order is the descending order of their sort keys across all
of its partitions.

Each partition is read by its own Query, all of them at once, and the answers are merged on
their sort keys (a k-way merge). A page of ``first`` items needs at most ``first`` items from
each partition, and one more to tell whether more follow: each Query asks for ``first + 1``.
Its cursor holds where the page ended, which is where every partition resumes: the next item
of each is the first one whose sort key is below the last one shown (the Query's exclusive
start key need not be an item of that partition). So a page continues the list exactly as a
page of a single partition does, whatever its number of partitions, and its cursor stays one
sort key long.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

from dynamo.cursors import CursorShape
from dynamo.db import Db
from dynamo.items import M, parse
from dynamo.reads import Page, count, query_items

__all__ = ["count_all", "merged_items", "merged_page"]


def _sk(raw: Mapping[str, Any]) -> str:
    sk: str = raw["sk"]["S"]
    return sk


async def merged_page(
    db: Db,
    model: type[M],
    pks: Sequence[str],
    prefix: str,
    first: int,
    after: str | None,
    *,
    bound: Mapping[str, str],
    consistent: bool = False,
) -> Page[M]:
    """One page of the items of partitions ``pks`` whose sort key begins with ``prefix``,
    merged in descending order of their sort keys. A cursor holds ``bound`` (what names the
    list: a cursor of another list is refused with INVALID_CURSOR) and the sort key of its
    item; ``consistent``: every Query with ConsistentRead."""
    shape = CursorShape(exact=bound, prefixes={"sk": prefix})
    start = db.cursors.decode(after, shape)["sk"] if after is not None else None
    parts = await asyncio.gather(
        *(
            query_items(
                db,
                key_condition="pk = :pk AND begins_with(sk, :prefix)",
                values={":pk": pk, ":prefix": prefix},
                limit=first + 1,
                start={"pk": pk, "sk": start} if start is not None else None,
                consistent=consistent,
            )
            for pk in pks
        )
    )
    merged = list(islice(heapq.merge(*parts, key=_sk, reverse=True), first + 1))
    shown = merged[:first]
    return Page(
        items=[parse(model, raw) for raw in shown],
        cursors=[db.cursors.encode({**bound, "sk": _sk(raw)}) for raw in shown],
        has_next=len(merged) > first,
    )


async def merged_items(
    db: Db,
    pks: Sequence[str],
    *,
    key_condition: str,
    values: Mapping[str, Any],
    limit: int,
    descending: bool = True,
) -> list[dict[str, Any]]:
    """Up to ``limit`` raw items of one key-condition Query (``:pk`` the partition) run on each
    partition of ``pks`` at once, merged in the order of their sort keys (descending or
    ascending)."""
    parts = await asyncio.gather(
        *(
            query_items(
                db,
                key_condition=key_condition,
                values={**values, ":pk": pk},
                limit=limit,
                descending=descending,
            )
            for pk in pks
        )
    )
    if len(parts) == 1:
        return parts[0]
    return list(islice(heapq.merge(*parts, key=_sk, reverse=descending), limit))


async def count_all(
    db: Db, pks: Sequence[str], *, key_condition: str, values: Mapping[str, Any]
) -> int:
    """How many items of the partitions ``pks`` match a key condition (``:pk`` the partition):
    one COUNT Query on each at once, each followed through LastEvaluatedKey to its end."""
    counts = await asyncio.gather(
        *(count(db, key_condition=key_condition, values={**values, ":pk": pk}) for pk in pks)
    )
    return sum(counts)
