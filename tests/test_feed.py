"""The change feed across instances: two service instances on one table and one Redis, each
running a projector (the lease lets one project) and a feed reader. A subscriber on one hears
of every change made through the other; a reader that loses its place resyncs."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from aiohttp import ClientWebSocketResponse
from redis.asyncio import Redis

from leaderboard.app import FEED
from leaderboard.config import Settings
from rankindex.feed import ChangeFeed
from rankindex.index import RankIndex
from rankindex.keys import FEED as FEED_KEY
from rankindex.lease import Lease
from rankindex.notices import Notice, NoticeKind, encode
from rankindex.projector import Projector
from tests.conftest import Api, Indexed, _serve
from tests.test_bans import ban
from tests.test_erasure import erase
from tests.test_metrics import scrape, value
from tests.test_moderation import _remove
from tests.test_subscriptions import _silent, _subscribed

ARRIVAL = 10.0
"""Seconds a notice may take to cross instances before a test fails: generous, for a slow
machine shared with other work (the delay measured here is a few hundred ms at most)."""


@dataclass
class Fleet:
    a: Api
    b: Api
    redis: Redis
    """The test's own client of the instances' Redis."""
    namespace: str

    def feed(self, api: Api) -> ChangeFeed:
        feed: ChangeFeed = api.http.app[FEED]
        return feed


@pytest.fixture
async def fleet(settings: Settings, redis_url: str) -> AsyncIterator[Fleet]:
    shared = replace(settings, redis_url=redis_url)
    redis = Redis.from_url(redis_url)
    try:
        async with (
            _serve(shared, None, project_ranks=True) as a,
            _serve(shared, None, project_ranks=True) as b,
        ):
            fleet = Fleet(a, b, redis, settings.table)
            # Each reader has found the stream's end: it hears of every change from now on.
            await _until(lambda: fleet.feed(a).connected and fleet.feed(b).connected)
            yield fleet
    finally:
        await redis.aclose()


async def _pushed(ws: ClientWebSocketResponse) -> list[tuple[str, int, int]]:
    message: dict[str, Any] = await ws.receive_json(timeout=ARRIVAL)
    assert message["type"] == "next", message
    top = message["payload"]["data"]["leaderboardChanged"]
    return [(e["player"]["id"], e["score"], e["rank"]) for e in top["entries"]]


async def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + ARRIVAL
    while not check():
        assert time.monotonic() < deadline, "not within the timeout"
        await asyncio.sleep(0.01)


async def _podium(api: Api) -> None:
    for p in ("ann", "bob", "cat", "dan"):
        await api.create_player(p)
    await api.create_board("b")
    for p, s in (("ann", 50), ("bob", 40), ("cat", 30)):
        assert (await api.submit(p, "b", s))["errors"] == []


async def test_a_play_through_one_instance_reaches_a_subscriber_on_the_other(
    fleet: Fleet,
) -> None:
    a, b = fleet.a, fleet.b
    heard: list[Notice] = []
    fleet.feed(b).on_notice(heard.append)
    await _podium(a)
    async with _subscribed(b) as ws:
        assert await _pushed(ws) == [("ann", 50, 1), ("bob", 40, 2), ("cat", 30, 3)]
        # B made no write: only the feed can tell it.
        assert (await a.submit("dan", "b", 45))["improved"]
        assert await _pushed(ws) == [("ann", 50, 1), ("dan", 45, 2), ("bob", 40, 3)]
        # A change below the top wakes B's subscriber, which finds nothing to send.
        assert (await a.submit("cat", "b", 35))["improved"]
        assert await _silent(ws, 1.0)
    # B's reader heard of each of A's changes to the board, with the rank values before and
    # after (a DESC board's rank value is the score), once each (in the order of each
    # item's changes; shards may interleave different items').
    await _until(lambda: len(heard) >= 6)
    told = [(n.kind, n.board, n.player, n.before, n.after, n.version) for n in heard]
    assert sorted(told, key=str) == sorted(
        [
            (NoticeKind.BOARD, "b", None, None, None, None),
            (NoticeKind.PUT, "b", "ann", None, 50, 1),
            (NoticeKind.PUT, "b", "bob", None, 40, 1),
            (NoticeKind.PUT, "b", "cat", None, 30, 1),
            (NoticeKind.PUT, "b", "dan", None, 45, 1),
            (NoticeKind.PUT, "b", "cat", 30, 35, 2),
        ],
        key=str,
    )
    cats = [n.version for n in heard if n.player == "cat"]
    assert cats == [1, 2]
    assert all(n.at_ms is not None for n in heard)
    health = await (await b.http.get("/healthz")).json()
    assert health["changeFeed"]["connected"] is True
    assert health["changeFeed"]["notices"] >= 5
    assert health["changeFeed"]["lastDelayMs"] is not None
    # B's metrics count what its reader received, each dated change's delay observed once.
    samples = await scrape(b.http)
    received = fleet.feed(b).notices
    assert value(samples, "leaderboard_change_feed_notices_total") == received
    assert value(samples, "leaderboard_change_feed_delay_seconds_count") == received
    assert value(samples, "leaderboard_change_feed_resyncs_total") == fleet.feed(b).resyncs


async def test_a_removal_a_ban_and_an_erasure_through_one_instance_reach_the_other(
    fleet: Fleet,
) -> None:
    a, b = fleet.a, fleet.b
    await _podium(a)
    async with _subscribed(b) as ws:
        assert await _pushed(ws) == [("ann", 50, 1), ("bob", 40, 2), ("cat", 30, 3)]
        assert (await _remove(a, "b", "bob"))["data"]["removeEntry"]["errors"] == []
        assert await _pushed(ws) == [("ann", 50, 1), ("cat", 30, 2)]
        assert (await ban(a, "ann"))["data"]["banPlayer"]["errors"] == []
        assert await _pushed(ws) == [("cat", 30, 1)]
        erased = await erase(a, "cat")
        assert erased["data"]["erasePlayer"]["complete"] is True
        assert await _pushed(ws) == []


async def _notice(redis: Redis, namespace: str, board: str) -> None:
    """Append a notice of a board nobody watches, as a projector would."""
    fields: dict[Any, Any] = encode(Notice(NoticeKind.BOARD, board))
    await redis.xadd(FEED_KEY.format(ns=namespace), fields)


async def _kill_feed_readers(redis: Redis) -> int:
    """Close every feed reader's connection from the server's side."""
    clients: list[dict[str, Any]] = await redis.client_list()
    readers = [c["id"] for c in clients if c.get("name") == "leaderboard-feed"]
    for client_id in readers:
        await redis.client_kill_filter(_id=client_id)
    return len(readers)


async def test_a_reader_that_lost_its_place_resyncs_and_its_subscribers_catch_up(
    settings: Settings, redis_url: str
) -> None:
    """While the test holds the projector's lease, no notice is written: a play through A is
    then a notice lost, and B's subscriber stays behind until B's reader finds its place lost
    (the stream deleted, trimmed past it, or its connection killed) and resyncs."""
    shared = replace(settings, redis_url=redis_url)
    redis = Redis.from_url(redis_url)
    held = Lease(redis, settings.table, ttl_ms=60_000)
    assert await held.hold()
    feed_key = FEED_KEY.format(ns=settings.table)
    try:
        async with (
            _serve(shared, None, project_ranks=True) as a,
            _serve(shared, None, project_ranks=True) as b,
        ):
            feed: ChangeFeed = b.http.app[FEED]
            await _until(lambda: feed.connected)
            await _podium(a)
            async with _subscribed(b) as ws:
                assert await _pushed(ws) == [("ann", 50, 1), ("bob", 40, 2), ("cat", 30, 3)]

                async def lose_a_notice(score: int) -> None:
                    # The reader has read something (so a stream gone or emptied behind it
                    # means notices lost), then a play goes by without a notice.
                    seen = feed.notices
                    await _notice(redis, settings.table, "elsewhere")
                    await _until(lambda: feed.notices > seen and feed.connected)
                    assert (await a.submit("dan", "b", score))["improved"]
                    assert await _silent(ws, 1.0), "no notice, no push"

                # The stream deleted (as a Redis that lost its data would have it).
                await lose_a_notice(35)
                resyncs = feed.resyncs
                await redis.delete(feed_key)
                assert await _pushed(ws) == [("ann", 50, 1), ("bob", 40, 2), ("dan", 35, 3)]
                assert feed.resyncs == resyncs + 1

                # Notices written and trimmed away before the reader saw them.
                await lose_a_notice(45)
                async with redis.pipeline(transaction=True) as pipe:
                    for n in range(3):
                        fields: dict[Any, Any] = encode(Notice(NoticeKind.BOARD, f"x{n}"))
                        pipe.xadd(feed_key, fields)
                    pipe.xtrim(feed_key, maxlen=0, approximate=False)
                    await pipe.execute()
                assert await _pushed(ws) == [("ann", 50, 1), ("dan", 45, 2), ("bob", 40, 3)]
                assert feed.resyncs == resyncs + 2

                # The reader's connection killed.
                await lose_a_notice(55)
                assert await _kill_feed_readers(redis) == 2  # A's and B's
                assert await _pushed(ws) == [("dan", 55, 1), ("ann", 50, 2), ("bob", 40, 3)]
                assert feed.resyncs == resyncs + 3
                samples = await scrape(b.http)
                assert value(samples, "leaderboard_change_feed_resyncs_total") == feed.resyncs

                # The lease given up: a projector of A or B takes over, and the changes made
                # meanwhile reach the feed.
                await held.release()
                assert (await a.submit("cat", "b", 60))["improved"]
                assert await _pushed(ws) == [("cat", 60, 1), ("dan", 55, 2), ("ann", 50, 3)]
    finally:
        await redis.aclose()


class _Counting(RankIndex):
    """The index, counting the changes each projector applies through it."""

    applied_changes = 0

    async def apply(self, changes: Any, notices: Any = ()) -> int:
        self.applied_changes += len(changes)
        return await super().apply(changes, notices)


async def test_one_projector_applies_at_a_time_and_another_takes_over(
    indexed: Indexed,
) -> None:
    api, redis, ns = indexed.api, indexed.index.redis, indexed.index.namespace
    indexes = [_Counting(redis, ns), _Counting(redis, ns)]
    leases = [Lease(redis, ns), Lease(redis, ns)]
    stops = [asyncio.Event(), asyncio.Event()]
    projectors = [
        Projector(indexed.stream, i, lease) for i, lease in zip(indexes, leases, strict=True)
    ]
    tasks = [asyncio.create_task(p.run(s)) for p, s in zip(projectors, stops, strict=True)]
    try:
        for p in range(4):
            await api.create_player(f"p{p}")
        await api.create_board("b")
        for n in range(8):
            await api.submit(f"p{n % 4}", "b", 10 + n)
        await _until(lambda: any(lease.held for lease in leases))
        first = 0 if leases[0].held else 1
        other = 1 - first
        await _until(lambda: indexes[first].applied_changes >= 9)  # the board, 8 entries
        assert (await indexed.index.verify(api.db, "b")).ok
        assert indexes[other].applied_changes == 0, "only the lease's holder applies"
        assert not leases[other].held

        # The holder stops cleanly: it gives the lease up, the other takes over at once and
        # continues from the shared checkpoint.
        stops[first].set()
        await asyncio.wait_for(tasks[first], ARRIVAL)
        for n in range(4):
            await api.submit(f"p{n}", "b", 100 + n)
        await _until(lambda: indexes[other].applied_changes >= 4)
        assert (await indexed.index.verify(api.db, "b")).ok
        assert indexes[other].applied_changes == 4, "nothing read again from before"

        # A holder that dies (cancelled, no clean stop) keeps the lease until it lapses;
        # then the first projector, started again, takes over.
        stops[first] = asyncio.Event()
        tasks[first] = asyncio.create_task(projectors[first].run(stops[first]))
        tasks[other].cancel()
        await asyncio.wait_for(asyncio.gather(tasks[other], return_exceptions=True), ARRIVAL)
        before = indexes[first].applied_changes
        await api.submit("p0", "b", 500)
        await _until(lambda: indexes[first].applied_changes > before)
        assert (await indexed.index.verify(api.db, "b")).ok
    finally:
        for stop in stops:
            stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_the_lease_is_held_by_one_and_taken_over_when_it_lapses(
    redis_url: str, settings: Settings
) -> None:
    redis = Redis.from_url(redis_url)
    try:
        one, two = Lease(redis, settings.table), Lease(redis, settings.table)
        assert await one.hold()
        assert not await two.hold()
        assert await one.hold(), "renewed by its holder"
        await one.release()
        assert await two.hold(), "given up: taken at once"
        assert not await one.hold()
        await two.release()
        # A lease of 300 ms (one long enough for the steps above to be sure of) that its
        # holder stops renewing: it lapses, and another takes it.
        brief = Lease(redis, settings.table, ttl_ms=300)
        assert await brief.hold()
        await asyncio.sleep(0.6)
        assert await two.hold()
        assert not await brief.hold()
    finally:
        await redis.aclose()


async def test_the_delay_from_a_play_to_the_other_instance(fleet: Fleet) -> None:
    """Measured, not asserted against a bound: printed for docs/how-to/scale-out.md (run with
    -s)."""
    a, b = fleet.a, fleet.b
    players = [f"p{i}" for i in range(5)]
    for p in players:
        await a.create_player(p)
    await a.create_board("b")
    arrived: dict[tuple[str, int], float] = {}

    def record(notice: Notice) -> None:
        if notice.kind is NoticeKind.PUT and notice.player and notice.after is not None:
            arrived[(notice.player, notice.after)] = time.monotonic()

    fleet.feed(b).on_notice(record)
    delays: list[float] = []
    for n in range(50):
        player, score = players[n % 5], 100 + n
        assert (await a.submit(player, "b", score))["improved"]
        committed = time.monotonic()
        await _until(lambda: (player, score) in arrived)  # noqa: B023
        delays.append(arrived[(player, score)] - committed)
    cuts = statistics.quantiles(delays, n=100, method="inclusive")
    print(
        f"\nfeed delay, play committed through A -> notice in B's broker, {len(delays)} plays:"
        f" p50 {cuts[49] * 1000:.0f} ms, p99 {cuts[98] * 1000:.0f} ms,"
        f" max {max(delays) * 1000:.0f} ms"
    )
    assert len(delays) == 50
