"""What a process wrote lately: the reads it keeps (an answer the response cache stores) are
then consistent, so that they show its own writes; through two instances on one table, with
the parameters of the DynamoDB calls each instance makes recorded by a botocore hook."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dynamo.scores import SCORE
from edge.app_keys import BROKER
from leaderboard.config import Settings
from rankindex.notices import Notice, NoticeKind
from resolvers.broker import Broker
from resolvers.local_writes import LocalWrites
from tests.conftest import Api
from tests.test_response_cache import (
    FakeClock,
    Fleet,
    _board,
    _feed,
    _read,
    _top,
    _until,
    two_instances,
)
from tests.test_subscriptions import _next, _silent, _subscribed


@pytest.fixture
async def fleet(settings: Settings, redis_url: str) -> AsyncIterator[Fleet]:
    """Two instances whose clocks are held: a write stays within its window (5 s) however
    long the test's next steps, or the feed's copy of it, take on a loaded machine."""
    async with two_instances(settings, redis_url) as served:
        served.a.clock.hold()
        served.b.clock.hold()
        yield served


@contextmanager
def _recorded(api: Api, operation: str) -> Iterator[list[dict[str, Any]]]:
    """The parameters of every ``operation`` call the instance's DynamoDB client makes
    meanwhile (a hook that only looks; the calls go to DynamoDB Local as made)."""
    seen: list[dict[str, Any]] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        seen.append(dict(params))

    events = api.db.client.meta.events
    name = f"before-parameter-build.dynamodb.{operation}"
    events.register(name, record)
    try:
        yield seen
    finally:
        events.unregister(name, record)


def _broker(api: Api) -> Broker:
    broker: Broker = api.http.app[BROKER]
    return broker


def _consistent(calls: list[dict[str, Any]]) -> list[bool]:
    return [bool(c.get("ConsistentRead")) for c in calls]


def _pages(queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Queries of pages of entries (not of a board's item and count)."""
    prefix = SCORE.sk.prefix
    return [q for q in queries if q["ExpressionAttributeValues"].get(":prefix") == {"S": prefix}]


def test_a_board_written_is_recent_for_the_window_and_the_record_is_bounded() -> None:
    clock = FakeClock()
    writes = LocalWrites(window=5.0, max_boards=3, clock=clock)
    writes.wrote("a")
    clock.now = 4.9
    assert writes.recent("a")
    assert not writes.recent("b")
    clock.now = 5.0
    assert not writes.recent("a")
    for board in ("b", "c", "d", "e"):
        writes.wrote(board)
    assert len(writes) == 3  # "a" aged out, "b" left for room
    assert [writes.recent(x) for x in "abcde"] == [False, False, True, True, True]
    writes.wrote("c")  # written again: now the most recent
    writes.wrote("f")
    assert [writes.recent(x) for x in "cdef"] == [True, False, True, True]
    with pytest.raises(ValueError, match="above 0"):
        LocalWrites(window=0)


async def test_a_cache_miss_read_after_a_local_write_is_consistent_and_others_are_not(
    fleet: Fleet,
) -> None:
    a, b = fleet.a, fleet.b
    await _board(a, {"ann": 50, "bob": 40})
    await fleet.heard_of("bob", 40)
    # B wrote nothing to the board: its reads are eventually consistent.
    with _recorded(b, "Query") as queries, _recorded(b, "GetItem") as gets:
        data, calls = await _read(b)
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("bob", 40, 2)]
    # The board's Query (its item and its count) and its first page's.
    assert (_consistent(queries), gets) == ([False, False], [])
    # A play through B: B's next read of the board (a miss: the play evicted the page) is
    # consistent, the board's item and its first page.
    await b.create_player("cat")
    assert (await b.submit("cat", "b", 45))["improved"]
    with _recorded(b, "Query") as queries, _recorded(b, "GetItem") as gets:
        data, calls = await _read(b)
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("cat", 45, 2), ("bob", 40, 3)]
    assert (_consistent(queries), gets) == ([True, True], [])
    # A read whose answer is never stored (a later page) stays eventually consistent.
    cursor = data["leaderboard"]["topScores"]["pageInfo"]["endCursor"]
    later = """query Later($after: String) { leaderboard(id: "b") { topScores(first: 1,
        after: $after) { edges { node { score } } } } }"""
    with _recorded(b, "Query") as queries:
        body = await b.raw(later, {"after": cursor})
    assert body["data"]["leaderboard"]["topScores"]["edges"] == []
    assert _consistent(_pages(queries)) == [False]
    # A board B never wrote to is read as before.
    await a.create_board("quiet")
    with _recorded(b, "Query") as queries:
        await b.raw('{ leaderboard(id: "quiet") { topScores(first: 3) { edges { cursor } } } }')
    assert _consistent(queries) == [False, False]


def _put(
    player: str, version: int | None, after: int | None, kind: NoticeKind = NoticeKind.PUT
) -> Notice:
    return Notice(kind, "b", player, before=None, after=after, version=version)


def test_the_feed_s_copy_of_a_local_play_is_handled_once_and_nothing_else_is() -> None:
    clock = FakeClock()
    writes = LocalWrites(window=5.0, clock=clock)
    writes.played("b", "ann", 2, 50)
    assert writes.recent("b")
    # Another entry's notice, another board's, or one without a version: not the play's.
    assert not writes.handled(_put("bob", 2, 50))
    assert not writes.handled(Notice(NoticeKind.PUT, "c", "ann", after=50, version=2))
    assert not writes.handled(Notice(NoticeKind.BOARD, "b"))
    # An earlier change of the entry, arriving late: handled as usual, the play still known.
    assert not writes.handled(_put("ann", 1, 40))
    assert writes.handled(_put("ann", 2, 50))
    assert not writes.handled(_put("ann", 2, 50))  # matched once only
    assert writes.matched == 1
    # A later change of the entry (here its guard erased) forgets the play: the next
    # notice of that version is not its copy.
    writes.played("b", "ann", 3, 60)
    assert not writes.handled(_put("ann", 3, None, NoticeKind.ERASED))
    assert not writes.handled(_put("ann", 3, 60))
    # The same version with another rank value is another change.
    writes.played("b", "ann", 1, 70)
    assert not writes.handled(_put("ann", 1, 71))
    assert not writes.handled(_put("ann", 1, 70))
    # Past the window, the copy is handled as any notice (the reads are no longer
    # consistent); a resync forgets every play.
    writes.played("b", "ann", 4, 80)
    clock.now = 5.0
    assert not writes.handled(_put("ann", 4, 80))
    writes.played("b", "ann", 5, 90)
    writes.forget()
    assert not writes.handled(_put("ann", 5, 90))
    # A board forgotten for room is read eventually consistent again: its plays' copies are
    # handled as any notice.
    small = LocalWrites(window=5.0, max_boards=1, clock=clock)
    small.played("b", "ann", 1, 10)
    small.wrote("c")
    assert not small.handled(_put("ann", 1, 10))


async def test_a_play_wakes_the_writer_s_subscribers_once_and_the_other_s_through_the_feed(
    fleet: Fleet,
) -> None:
    a, b = fleet.a, fleet.b
    heard_by_a: list[Notice] = []
    _feed(a).on_notice(heard_by_a.append)
    await _board(a, {"ann": 50, "bob": 40})
    await a.create_player("cat")
    for player, score in (("ann", 50), ("bob", 40)):
        await fleet.heard_of(player, score)
    await _until(lambda: sum(n.kind is NoticeKind.PUT for n in heard_by_a) == 2)
    start = [("ann", 50, 1), ("bob", 40, 2)]
    async with _subscribed(a) as on_a, _subscribed(b) as on_b:
        assert (await _next(on_a), await _next(on_b)) == (start, start)
        a.reset_calls()
        b.reset_calls()
        matched = _broker(a).writes.matched
        with _recorded(a, "Query") as queries:
            assert (await a.submit("cat", "b", 45))["improved"]
            after = [("ann", 50, 1), ("cat", 45, 2), ("bob", 40, 3)]
            assert await _next(on_a) == after  # woken by A's commit, at once
            assert await _next(on_b) == after  # woken by the feed
            # The feed's copy of the play has reached A too, and woke nobody there.
            await _until(lambda: any(n.player == "cat" for n in heard_by_a))
            assert await _silent(on_a, 1.0)
        assert _broker(a).writes.matched == matched + 1
        # The play's read of the board (A's), then one shared read of the board and its top
        # on each instance, A's a consistent one.
        assert (a.calls.get("Query"), b.calls.get("Query")) == (1 + 2, 2)
        assert _consistent(queries) == [True] * 3


async def test_the_feed_s_copy_of_a_local_play_leaves_the_writer_s_cache_as_it_was(
    fleet: Fleet,
) -> None:
    a = fleet.a
    heard_by_a: list[Notice] = []
    _feed(a).on_notice(heard_by_a.append)
    await _board(a, {"ann": 50, "bob": 40})
    await a.create_player("cat")
    await _until(lambda: len(heard_by_a) == 3)  # the board's notice and both entries'
    assert (await a.submit("cat", "b", 45))["improved"]
    data, calls = await _read(a)  # the play evicted the page: read again, and stored
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("cat", 45, 2), ("bob", 40, 3)]
    await _until(lambda: any(n.player == "cat" for n in heard_by_a))
    assert await _read(a) == (data, 0)
