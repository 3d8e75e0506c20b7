"""Reads of one ordered list kept under several partition keys: a write-sharded board's Score
items (dynamo/scores.py), whose order is the order of their sort keys across all of its
partitions.

Each partition is read by its own Query, all of them at once, and the answers are merged on
their sort keys (a k-way merge). A read of ``n`` items of N partitions does not ask each for
``n``: the entries of a board are spread over its partitions by a hash of the player, so each
holds about ``n / N`` of any run of them. Each Query asks for :func:`allowance` items, the
number that one partition exceeds among ``n`` evenly spread ones less than once in a hundred
reads, at least 8 (top-100 pages: 39 items of each of 4 partitions, 25 of each of 8, where
``n`` would be 101 of each).

The merge then stays exact for any spread. It takes the next item from the partition whose
unread head comes first; when a partition's answer is used up and the partition holds more
(its Query stopped at its limit, ``LastEvaluatedKey``), the merge goes on only while the
heads of the others come before where that partition stopped, since every item it has not
answered comes after. Otherwise the partitions that stopped too early are read again from
where they stopped, concurrently, each for all the items the read still lacks (and one more
for a page, to tell whether another follows), and the merge goes on. So every item is taken
in its place, ties included, and a partition is read at most twice for one read (but where a
play races it, below). At most ``max_in_flight`` of a request's calls are under way at once
(dynamo/budget.py): the Queries of a round on N = 8 go out in two turns of four.

A partition read again answers as it stands then: a player whose entry changed between the
two reads could be answered twice, and is taken once, where it was first found (``identity``
names an item's player); one whose entry moved from below where its partition stopped to
above it is missing from that read, as it would be from the next page of a cursor.

A page's cursor holds where the page ended, which is where every partition resumes: the next
item of each is the first one whose sort key is below the last one shown (the Query's
exclusive start key need not be an item of that partition). So a page continues the list
exactly as a page of a single partition does, whatever its number of partitions, and its
cursor stays one sort key long.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from dynamo.cursors import CursorShape, LazyCursors
from dynamo.db import Db
from dynamo.items import M, parse
from dynamo.reads import Page, count, query_run

__all__ = [
    "ALLOWANCE_FLOOR",
    "SPREAD_MISS",
    "allowance",
    "count_all",
    "merged_items",
    "merged_page",
]

SPREAD_MISS = 0.01
"""How often, at most, a read of evenly spread items reads a partition again: the chance that
some partition holds more of the items read than it was asked for."""

ALLOWANCE_FLOOR = 8
"""The fewest items a partition is asked for (fewer when fewer are wanted): a Query is billed
by the 4 KB of items it reads, at least one, and 8 Score items (170 to 240 bytes each without
metadata) fit in one, so asking for fewer saves nothing and makes a second read likelier."""

Raw = dict[str, Any]
Identity = Callable[[Raw], str]
Query = Callable[
    [str, Mapping[str, str] | None, int], Awaitable[tuple[list[Raw], dict[str, str] | None]]
]
"""Reads a partition: ``(pk, start, limit)`` to its items and where it stopped, as
:func:`dynamo.reads.query_run`."""


@lru_cache(maxsize=1024)
def allowance(wanted: int, partitions: int) -> int:
    """How many items to ask each of ``partitions`` partitions for when ``wanted`` items of
    them are to be merged: the least ``k`` such that ``partitions`` times the chance that one
    partition holds ``k`` or more of ``wanted`` items, each in a partition drawn at random, is
    at most :data:`SPREAD_MISS` (the binomial distribution's tail), and at least
    :data:`ALLOWANCE_FLOOR`; never more than ``wanted``."""
    if partitions <= 1 or wanted <= ALLOWANCE_FLOOR:
        return wanted
    p = 1.0 / partitions
    pmf = [(1.0 - p) ** wanted]
    for i in range(1, wanted + 1):
        pmf.append(pmf[-1] * (wanted - i + 1) / i * p / (1.0 - p))
    tail = 1.0
    for k in range(wanted + 1):
        # tail is the chance of holding k or more.
        if partitions * tail <= SPREAD_MISS:
            return max(k, ALLOWANCE_FLOOR)
        tail -= pmf[k]
    return wanted


@dataclass
class _Partition:
    pk: str
    start: dict[str, str] | None
    """Where its Query goes on from: the key its last read stopped at, or where the read
    begins; None once it was read to its end."""
    items: deque[Raw] = field(default_factory=deque)
    """What it answered that the merge has not taken yet."""


class _Merge:
    """The k-way merge of the partitions ``pks``, each read by ``query`` from ``start(pk)``."""

    def __init__(
        self,
        pks: Sequence[str],
        query: Query,
        *,
        start: Callable[[str], dict[str, str] | None],
        descending: bool,
        identity: Identity,
    ) -> None:
        self._parts = [_Partition(pk, start(pk)) for pk in pks]
        self._query = query
        self._descending = descending
        self._identity = identity
        self._taken: set[str] = set()

    def _before(self, a: str, b: str) -> bool:
        """Whether sort key ``a`` comes before ``b`` in the merged order."""
        return a > b if self._descending else a < b

    async def _read(self, parts: Sequence[_Partition], limit: int) -> None:
        async def one(part: _Partition) -> None:
            items, part.start = await self._query(part.pk, part.start, limit)
            part.items.extend(items)

        await asyncio.gather(*(one(part) for part in parts))

    def _drop_taken(self) -> None:
        for part in self._parts:
            while part.items and self._identity(part.items[0]) in self._taken:
                part.items.popleft()

    async def take(self, n: int, *, lookahead: bool) -> tuple[list[Raw], bool]:
        """The first ``n`` items in order and, with ``lookahead``, whether any follow them
        (False without)."""
        if n + lookahead == 0:
            return [], False
        await self._read(self._parts, allowance(n + lookahead, len(self._parts)))
        taken: list[Raw] = []
        while len(taken) < n:
            self._drop_taken()
            heads = [part for part in self._parts if part.items]
            best = None
            for part in heads:
                if best is None or self._before(_sk(part.items[0]), _sk(best.items[0])):
                    best = part
            behind = [
                part
                for part in self._parts
                if not part.items
                and part.start is not None
                and (best is None or self._before(part.start["sk"], _sk(best.items[0])))
            ]
            if behind:
                await self._read(behind, n - len(taken) + lookahead)
                continue
            if best is None:
                break
            item = best.items.popleft()
            self._taken.add(self._identity(item))
            taken.append(item)
        return taken, lookahead and await self._more()

    async def _more(self) -> bool:
        """Whether any item follows those taken: one left unread in an answer, or else one
        of a partition that stopped at its limit."""
        while True:
            self._drop_taken()
            if any(part.items for part in self._parts):
                return True
            unread = [part for part in self._parts if part.start is not None]
            if not unread:
                return False
            await self._read(unread, 1)


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
    identity: Identity,
    consistent: bool = False,
) -> Page[M]:
    """One page of the items of partitions ``pks`` whose sort key begins with ``prefix``,
    merged in descending order of their sort keys. A cursor holds ``bound`` (what names the
    list: a cursor of another list is refused with INVALID_CURSOR) and the sort key of its
    item; ``identity`` names what one item stands for (an item of the same identity read
    again is left out); ``consistent``: every Query with ConsistentRead."""
    shape = CursorShape(exact=bound, prefixes={"sk": prefix})
    after_sk = db.cursors.decode(after, shape)["sk"] if after is not None else None

    async def query(
        pk: str, start: Mapping[str, str] | None, limit: int
    ) -> tuple[list[Raw], dict[str, str] | None]:
        return await query_run(
            db,
            key_condition="pk = :pk AND begins_with(sk, :prefix)",
            values={":pk": pk, ":prefix": prefix},
            limit=limit,
            start=start,
            consistent=consistent,
        )

    merge = _Merge(
        pks,
        query,
        start=lambda pk: None if after_sk is None else {"pk": pk, "sk": after_sk},
        descending=True,
        identity=identity,
    )
    shown, has_next = await merge.take(first, lookahead=True)
    return Page(
        items=[parse(model, raw) for raw in shown],
        cursors=LazyCursors(db.cursors, shown, lambda raw: {**bound, "sk": _sk(raw)}),
        has_next=has_next,
    )


async def merged_items(
    db: Db,
    pks: Sequence[str],
    *,
    key_condition: str,
    values: Mapping[str, Any],
    limit: int,
    identity: Identity,
    descending: bool = True,
) -> list[Raw]:
    """The first ``limit`` raw items of one key-condition Query (``:pk`` the partition) run on
    each partition of ``pks``, merged in the order of their sort keys (descending or
    ascending); ``identity`` as for :func:`merged_page`."""

    async def query(
        pk: str, start: Mapping[str, str] | None, n: int
    ) -> tuple[list[Raw], dict[str, str] | None]:
        return await query_run(
            db,
            key_condition=key_condition,
            values={**values, ":pk": pk},
            limit=n,
            descending=descending,
            start=start,
        )

    merge = _Merge(pks, query, start=lambda _: None, descending=descending, identity=identity)
    items, _ = await merge.take(limit, lookahead=False)
    return items


async def count_all(
    db: Db, pks: Sequence[str], *, key_condition: str, values: Mapping[str, Any]
) -> int:
    """How many items of the partitions ``pks`` match a key condition (``:pk`` the partition):
    one COUNT Query on each at once, each followed through LastEvaluatedKey to its end."""
    counts = await asyncio.gather(
        *(count(db, key_condition=key_condition, values={**values, ":pk": pk}) for pk in pks)
    )
    return sum(counts)
