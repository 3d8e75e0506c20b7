"""The response cache through the app, under concurrent requests: its bound in bytes with
many distinct answers (least recently used first out, a recently hit answer kept), and its
guard against a read that overlaps a change (a read held by a botocore hook that only
waits, while a play lands on the board)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, cast

import pytest

from dynamo.scores import SCORE
from leaderboard.config import MB, Settings
from rankindex.notices import NoticeKind
from tests.conftest import Api, _serve
from tests.test_response_cache import (
    ARRIVAL,
    Fleet,
    _board,
    _health,
    _read,
    _responses,
    _top,
    _until,
    two_instances,
)

PLAYERS = 100
WIDE = """query Wide{n} {{ leaderboard(id: "b") {{ topScores(first: 100) {{
  edges {{ cursor node {{ score player {{ id name }} }} }} }} }} }}"""
"""A whole board of 100 entries with their cursors (about 15 KB); each ``n`` is another
query text, and so another answer of the same size."""


@pytest.fixture
async def small(settings: Settings) -> AsyncIterator[Api]:
    """One instance with a 1 MB cache (no Redis: its own writes are the only ones) and a
    board of 100 entries."""
    async with _serve(replace(settings, cache_mb=1), None) as api:
        await api.create_board("b")
        players = [f"p{n:03}" for n in range(PLAYERS)]
        for group in range(0, PLAYERS, 10):
            await asyncio.gather(*(api.create_player(p) for p in players[group : group + 10]))
            await asyncio.gather(
                *(
                    api.submit(p, "b", 1000 + n)
                    for n, p in enumerate(players)
                    if group <= n < group + 10
                )
            )
        yield api


async def _wide(api: Api, n: int) -> int:
    """Ask the ``n``-th wide query; the Queries the instance made meanwhile (0: the answer
    came from the cache)."""
    before = api.calls.get("Query", 0)
    body = await api.raw(WIDE.format(n=n))
    assert "errors" not in body, body
    assert len(body["data"]["leaderboard"]["topScores"]["edges"]) == PLAYERS
    return api.calls.get("Query", 0) - before


async def test_many_distinct_answers_stay_within_the_bound_least_recently_used_out_first(
    small: Api,
) -> None:
    cache = _responses(small)
    assert await _wide(small, 0) > 0
    size = cache.bytes
    room = MB // size  # answers of this size the cache holds
    assert 20 < room < 200, size
    # Twice as many distinct answers as fit, asked eight at once, the first one hit between
    # every eight: /healthz, polled meanwhile, never shows more bytes than the bound.
    seen: list[int] = []
    done = asyncio.Event()

    async def watch() -> None:
        while not done.is_set():
            seen.append((await _health(small))["responseCache"]["bytes"])
            await asyncio.sleep(0.005)

    watcher = asyncio.create_task(watch())
    firsts = range(1, 2 * room, 8)
    for first in firsts:
        assert await _wide(small, 0) == 0  # hit: the most recently used again
        misses = await asyncio.gather(*(_wide(small, n) for n in range(first, first + 8)))
        assert all(calls > 0 for calls in misses)
        assert cache.bytes <= MB
    done.set()
    await watcher
    assert len(seen) > 10
    assert max(seen) <= MB
    shown = (await _health(small))["responseCache"]
    stored = 1 + 8 * len(firsts)
    assert (shown["entries"], shown["evictions"]) == (room, stored - room)
    # The hot answer stayed; the oldest of the others left.
    assert await _wide(small, 0) == 0
    assert await _wide(small, 1) > 0
    # In order: with the cache full of answers asked one by one, the least recently used
    # leaves first, and one just hit is kept.
    for n in range(1000, 1000 + room):
        assert await _wide(small, n) > 0
    assert len(cache) == room
    assert await _wide(small, 1000) == 0  # now the most recently used
    evictions = cache.evictions
    assert await _wide(small, 2000) > 0  # one more: one answer leaves for room
    assert cache.evictions == evictions + 1
    assert await _wide(small, 1000) == 0  # the one just hit stayed
    assert await _wide(small, 1002) == 0  # and a later one
    assert await _wide(small, 1001) > 0  # the least recently used left


class Held:
    """Botocore hooks on one instance's client: the next Query of a page of entries (not of
    a board's item and count), once its answer is in, waits until released (the answer
    itself is as DynamoDB Local gave it)."""

    def __init__(self) -> None:
        self.answered = asyncio.Event()
        self.release = asyncio.Event()
        self.armed = True

    def mark(self, *, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        """Before the call: tell a page of entries by its sort key prefix."""
        values = params.get("ExpressionAttributeValues", {})
        context["page of entries"] = values.get(":prefix") == {"S": SCORE.sk.prefix}

    async def __call__(self, *, context: dict[str, Any], **_: Any) -> None:
        if not self.armed or not context.get("page of entries"):
            return
        self.armed = False
        self.answered.set()
        await self.release.wait()


@contextmanager
def _holding(api: Api) -> Iterator[Held]:
    held = Held()
    hook = cast(Any, held)  # aiobotocore awaits a coroutine hook; botocore's types know none
    events = api.db.client.meta.events
    events.register("before-parameter-build.dynamodb.Query", held.mark)
    events.register("after-call.dynamodb.Query", hook)
    try:
        yield held
    finally:
        held.release.set()
        events.unregister("after-call.dynamodb.Query", hook)
        events.unregister("before-parameter-build.dynamodb.Query", held.mark)


@pytest.fixture
async def fleet(settings: Settings, redis_url: str) -> AsyncIterator[Fleet]:
    async with two_instances(settings, redis_url) as served:
        yield served


@pytest.mark.parametrize("through", ["the other instance", "the same instance"])
async def test_a_read_overlapping_a_play_on_its_board_is_not_stored(
    fleet: Fleet, through: str
) -> None:
    a, b = fleet.a, fleet.b
    writer = a if through == "the other instance" else b
    await _board(a, {"ann": 50, "bob": 40})
    await a.create_player("cat")
    # B has heard of everything so far: no notice but the play's arrives during the read.
    await _until(lambda: any(n.kind is NoticeKind.BOARD for n in fleet.heard))
    await fleet.heard_of("ann", 50)
    await fleet.heard_of("bob", 40)
    cache = _responses(b)
    with _holding(b) as held:
        read = asyncio.create_task(_read(b))
        await asyncio.wait_for(held.answered.wait(), ARRIVAL)
        # B has read the board's top; the play lands before its answer is made.
        assert (await writer.submit("cat", "b", 45))["improved"]
        await fleet.heard_of("cat", 45)
        held.release.set()
        data, calls = await read
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("bob", 40, 2)]  # read before the play
    assert len(cache) == 0  # and so not stored
    data, calls = await _read(b)
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("cat", 45, 2), ("bob", 40, 3)]
    assert await _read(b) == (data, 0)  # this one was stored
