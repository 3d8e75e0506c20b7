"""What a process wrote lately: the reads it keeps (an answer the response cache stores) are
then consistent, so that they show its own writes; through two instances on one table, with
the parameters of the DynamoDB calls each instance makes recorded by a botocore hook."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from leaderboard.config import Settings
from resolvers.local_writes import LocalWrites
from tests.conftest import Api
from tests.test_response_cache import FakeClock, Fleet, _board, _read, _top, two_instances


@pytest.fixture
async def fleet(settings: Settings, redis_url: str) -> AsyncIterator[Fleet]:
    async with two_instances(settings, redis_url) as served:
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


def _consistent(calls: list[dict[str, Any]]) -> list[bool]:
    return [bool(c.get("ConsistentRead")) for c in calls]


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
    assert (_consistent(queries), _consistent(gets)) == ([False], [False])
    # A play through B: B's next read of the board (a miss: the play evicted the page) is
    # consistent, the board's item and its first page.
    await b.create_player("cat")
    assert (await b.submit("cat", "b", 45))["improved"]
    with _recorded(b, "Query") as queries, _recorded(b, "GetItem") as gets:
        data, calls = await _read(b)
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("cat", 45, 2), ("bob", 40, 3)]
    assert (_consistent(queries), _consistent(gets)) == ([True], [True])
    # A read whose answer is never stored (a later page) stays eventually consistent.
    cursor = data["leaderboard"]["topScores"]["pageInfo"]["endCursor"]
    later = """query Later($after: String) { leaderboard(id: "b") { topScores(first: 1,
        after: $after) { edges { node { score } } } } }"""
    with _recorded(b, "Query") as queries:
        body = await b.raw(later, {"after": cursor})
    assert body["data"]["leaderboard"]["topScores"]["edges"] == []
    assert _consistent(queries) == [False]
    # A board B never wrote to is read as before.
    await a.create_board("quiet")
    with _recorded(b, "Query") as queries:
        await b.raw('{ leaderboard(id: "quiet") { topScores(first: 3) { edges { cursor } } } }')
    assert _consistent(queries) == [False]
