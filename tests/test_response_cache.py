"""The response cache: which notices evict which answers, its bounds, its guard against reads
that overlap a change, and, through the real app (DynamoDB Local, Redis), that a cached page
costs no DynamoDB call and is never older than the notices its instance has heard."""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import pytest
from graphql import parse
from redis.asyncio import Redis

from dynamo.errors import ErrorCode, LeaderboardError
from edge.app_keys import RESPONSES
from edge.cost_walk import document_cost
from edge.schema import GRAPHQL_SCHEMA
from leaderboard.app import FEED
from leaderboard.config import MB, Settings
from rankindex.feed import ChangeFeed
from rankindex.notices import Notice, NoticeKind
from resolvers.broker import Broker
from resolvers.changes import writing
from resolvers.dependencies import BoardRules, EntryCount, PlayerName, TopPage, affected
from resolvers.response_cache import ENTRY_OVERHEAD, ResponseCache
from tests.conftest import ADMIN_KEYS, Api, Indexed, _serve, each_layout
from tests.test_feed import _kill_feed_readers
from tests.test_metrics import scrape, value
from tests.test_moderation import _remove

ARRIVAL = 10.0
"""Seconds a notice may take to reach an instance before a test fails (a slow machine)."""


def _put(
    board: str, player: str, before: int | None, after: int | None, *, fresh: bool = False
) -> Notice:
    return Notice(NoticeKind.PUT, board, player, before=before, after=after, fresh=fresh)


PAGE = TopPage("b", 40)
"""A first page of board b whose last entry's rank value is 40, with entries below it."""


@pytest.mark.parametrize(
    ("notice", "evicts"),
    [
        (_put("b", "p", None, 10, fresh=True), False),  # a new entry below the page
        (_put("b", "p", 10, 30), False),  # an entry below it, still below it
        (_put("b", "p", None, 40, fresh=True), True),  # ties the last entry: either side
        (_put("b", "p", 10, 90), True),  # climbs into it
        (_put("b", "p", 50, 90), True),  # moves inside it
        (_put("b", "p", None, 10), True),  # an entry before, of unknown rank value
        (Notice(NoticeKind.REMOVED, "b", "p", before=10), True),  # hasNextPage may turn
        (Notice(NoticeKind.ERASED, "b", "p"), True),
        (Notice(NoticeKind.BOARD, "b"), True),
        (_put("c", "p", None, 90, fresh=True), False),  # another board
        (Notice(NoticeKind.PLAYER, player="p"), False),
    ],
)
def test_a_first_page_is_evicted_only_by_a_change_that_can_reach_it(
    notice: Notice, evicts: bool
) -> None:
    assert affected(PAGE, notice) is evicts


def test_a_page_holding_the_whole_board_is_evicted_by_any_change_of_its_entries() -> None:
    whole = TopPage("b", None)
    assert affected(whole, _put("b", "p", None, 1, fresh=True))
    assert affected(whole, _put("b", "p", 5, 3))
    assert not affected(whole, _put("c", "p", None, 1, fresh=True))


def test_the_rules_count_and_names_each_have_their_own_notices() -> None:
    new, better = _put("b", "p", None, 10, fresh=True), _put("b", "p", 10, 20)
    assert not affected(BoardRules("b"), new)
    assert affected(BoardRules("b"), Notice(NoticeKind.BOARD, "b"))
    assert affected(EntryCount("b"), new)
    assert not affected(EntryCount("b"), better)
    assert affected(EntryCount("b"), Notice(NoticeKind.REMOVED, "b", "p", before=10))
    assert affected(PlayerName("p"), Notice(NoticeKind.PLAYER, player="p"))
    assert not affected(PlayerName("p"), Notice(NoticeKind.PLAYER, player="q"))
    assert not affected(PlayerName("p"), better)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _cache(max_bytes: int = MB, *, clock: Callable[[], float] = time.monotonic) -> ResponseCache:
    return ResponseCache(max_bytes, max_age=30, clock=clock, remembered=8)


def test_a_read_overlapping_a_change_that_reaches_it_is_not_stored() -> None:
    cache = _cache()
    started = cache.begin()
    cache.notice(_put("b", "p", None, 90, fresh=True))
    assert not cache.put(b"k", b"{}", [PAGE], started)
    assert cache.get(b"k") is None
    # A change below the page during the read does not stop it.
    started = cache.begin()
    cache.notice(_put("b", "q", None, 10, fresh=True))
    assert cache.put(b"k", b"{}", [PAGE], started)
    assert cache.get(b"k") == b"{}"


def test_a_read_older_than_the_notices_remembered_is_not_stored() -> None:
    cache = _cache()
    started = cache.begin()
    for n in range(9):  # one more than remembered, none reaching the page
        cache.notice(_put("b", f"p{n}", None, 1, fresh=True))
    assert not cache.put(b"k", b"{}", [PAGE], started)
    assert cache.put(b"k", b"{}", [PAGE], cache.begin())


def test_notices_evict_what_they_reach_and_keep_the_rest() -> None:
    cache = _cache()
    cache.put(b"page", b"1", [BoardRules("b"), PAGE, PlayerName("ann")], cache.begin())
    cache.put(b"count", b"2", [BoardRules("b"), EntryCount("b")], cache.begin())
    cache.put(b"other", b"3", [TopPage("c", None)], cache.begin())
    cache.notice(_put("b", "zed", None, 5, fresh=True))  # below the page; the count moves
    assert (cache.get(b"page"), cache.get(b"count"), cache.get(b"other")) == (b"1", None, b"3")
    cache.notice(Notice(NoticeKind.PLAYER, player="ann"))
    assert cache.get(b"page") is None
    assert cache.get(b"other") == b"3"
    cache.clear()
    assert (len(cache), cache.bytes) == (0, 0)


def test_the_least_recently_used_answers_leave_for_room_and_old_ones_expire() -> None:
    clock = FakeClock()
    size = 1000 + 1 + ENTRY_OVERHEAD  # a 1000-byte body, a 1-byte key, no dependency
    cache = _cache(3 * size, clock=clock)
    for key in (b"a", b"b", b"c"):
        assert cache.put(key, b"x" * 1000, [], cache.begin())
    assert cache.get(b"a") is not None  # a is now the most recently used
    cache.put(b"d", b"x" * 1000, [], cache.begin())
    assert [k for k in (b"a", b"b", b"c", b"d") if cache.get(k) is not None] == [
        b"a",
        b"c",
        b"d",
    ]
    assert cache.bytes == 3 * size
    assert not cache.put(b"e", b"x" * (4 * size), [], cache.begin())  # never fits
    clock.now = 31.0
    assert cache.get(b"a") is None
    assert len(cache) == 2


def test_a_write_evicts_what_it_changed_and_a_failed_one_what_it_may_have() -> None:
    cache, broker = _cache(), Broker()
    writes = broker.writes

    def fill() -> None:
        cache.put(b"b", b"1", [BoardRules("b")], cache.begin())
        cache.put(b"c", b"2", [BoardRules("c")], cache.begin())

    fill()
    with writing(cache, broker, atomic=True) as written:
        written.boards.append("b")
    assert (cache.get(b"b"), cache.get(b"c")) == (None, b"2")
    assert (writes.recent("b"), writes.recent("c")) == (True, False)
    fill()
    refused = LeaderboardError(ErrorCode.SCORE_OUT_OF_RANGE, "refused")
    with pytest.raises(LeaderboardError), writing(cache, broker, atomic=True):
        raise refused
    assert len(cache) == 2  # one transaction refused: nothing was written
    for code in (ErrorCode.OUTCOME_UNKNOWN, ErrorCode.BACKEND_UNAVAILABLE):
        fill()
        with pytest.raises(LeaderboardError), writing(cache, broker, atomic=True):
            raise LeaderboardError(code, "may or may not have been written")
        assert len(cache) == 0
    fill()
    with pytest.raises(asyncio.CancelledError), writing(cache, broker, atomic=True):
        raise asyncio.CancelledError  # cut off by the request's deadline
    assert len(cache) == 0
    fill()
    with pytest.raises(LeaderboardError), writing(cache, broker, atomic=False):
        raise refused  # some steps of several may have been taken
    assert len(cache) == 0
    assert len(writes) == 1  # only the write that committed is recorded


# Through the app.

TOP = """query Top($first: Int) { leaderboard(id: "b") { name topScores(first: $first) {
  edges { cursor node { rank score player { id name } } }
  pageInfo { hasNextPage endCursor } } } }"""


async def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + ARRIVAL
    while not check():
        assert time.monotonic() < deadline, "not within the timeout"
        await asyncio.sleep(0.01)


def _feed(api: Api) -> ChangeFeed:
    feed: ChangeFeed = api.http.app[FEED]
    return feed


def _responses(api: Api) -> ResponseCache:
    cache: ResponseCache = api.http.app[RESPONSES]
    return cache


async def _read(api: Api, query: str = TOP, first: int = 3, **kw: Any) -> tuple[Any, int]:
    """The answer's data and the DynamoDB calls it made."""
    api.reset_calls()
    body = await api.raw(query, {"first": first}, **kw)
    assert "errors" not in body, body
    return body["data"], sum(api.calls.values())


def _json(body: bytes) -> Any:
    return json.loads(body)


def _top(data: Any) -> list[tuple[str, int, int]]:
    edges = data["leaderboard"]["topScores"]["edges"]
    return [(e["node"]["player"]["id"], e["node"]["score"], e["node"]["rank"]) for e in edges]


async def _board(api: Api, scores: dict[str, int]) -> None:
    await api.create_board("b")
    for player, score in scores.items():
        await api.create_player(player)
        assert (await api.submit(player, "b", score))["errors"] == []


@pytest.fixture
async def cached(indexed: Indexed) -> Api:
    """A service with a Redis URL (and so a response cache), its feed reader connected."""
    await _until(lambda: _feed(indexed.api).connected)
    return indexed.api


@each_layout
async def test_a_top_page_asked_twice_reads_the_table_once(cached: Api) -> None:
    await _board(cached, {"ann": 50, "bob": 40, "cat": 30})
    first, calls = await _read(cached)
    assert calls > 0
    again, calls = await _read(cached)
    assert (again, calls) == (first, 0)
    assert _top(again) == [("ann", 50, 1), ("bob", 40, 2), ("cat", 30, 3)]
    # Other variables: another answer.
    assert (await _read(cached, first=2))[1] > 0
    samples = await scrape(cached.http)
    assert value(samples, "leaderboard_cache_hits_total") == 1
    assert value(samples, "leaderboard_cache_misses_total") == 2
    assert value(samples, "leaderboard_cache_bytes") == _responses(cached).bytes > 0
    # The board's partitions are one of its rules, which an answer from the cache holds.
    laid_out = TOP.replace("name topScores", "name partitions topScores")
    data, calls = await _read(cached, laid_out)
    assert (data["leaderboard"]["partitions"], calls > 0) == (cached.partitions, True)
    assert await _read(cached, laid_out) == (data, 0)


async def test_a_cached_answer_has_the_bytes_and_tag_of_the_answer_it_stored(
    cached: Api,
) -> None:
    await cached.create_board("b")
    for player, name, score in [("zoe", "Zoë 🎮", 50), ("ann", "Ann", 40)]:
        await cached.create_player(player, name)
        assert (await cached.submit(player, "b", score))["errors"] == []
    query = TOP.replace("query Top($first: Int)", "query Top").replace("$first", "2")
    answers = []
    for _ in range(2):
        response = await cached.http.get("/graphql", params={"query": query})
        assert response.status == 200
        answers.append((await response.read(), response.headers["ETag"]))
    assert answers[0] == answers[1]
    samples = await scrape(cached.http)
    assert value(samples, "leaderboard_cache_hits_total") == 1
    body = answers[1][0]
    assert body.isascii()  # non-ASCII characters are escaped, from the cache as from a run
    names = [
        e["node"]["player"]["name"]
        for e in _json(body)["data"]["leaderboard"]["topScores"]["edges"]
    ]
    assert names == ["Zoë 🎮", "Ann"]


async def _health(api: Api) -> Any:
    return await (await api.http.get("/healthz")).json()


async def test_healthz_shows_what_the_cache_holds_and_has_done(cached: Api) -> None:
    await _board(cached, {"ann": 50, "bob": 40})
    await _read(cached)
    await _read(cached)
    await _read(cached, first=1)
    shown = (await _health(cached))["responseCache"]
    assert shown == {
        "entries": 2,
        "bytes": _responses(cached).bytes,
        "maxBytes": 64 * MB,
        "hits": 1,
        "misses": 2,
        "evictions": 0,
    }
    assert shown["bytes"] > 2 * ENTRY_OVERHEAD
    await cached.create_player("cat")
    # Below the page of one, into the page of the whole board: one answer is evicted.
    assert (await cached.submit("cat", "b", 45))["improved"]
    shown = (await _health(cached))["responseCache"]
    assert (shown["entries"], shown["bytes"], shown["evictions"]) == (
        1,
        _responses(cached).bytes,
        1,
    )
    assert (await cached.submit("cat", "b", 60))["improved"]  # into the page of one
    shown = (await _health(cached))["responseCache"]
    assert (shown["entries"], shown["bytes"], shown["evictions"]) == (0, 0, 2)


async def test_healthz_shows_no_cache_when_it_is_off(api: Api) -> None:
    health = await _health(api)
    assert health["status"] == "ok"
    assert "responseCache" not in health


@each_layout
async def test_a_play_through_the_instance_is_in_its_next_read(cached: Api) -> None:
    await _board(cached, {"ann": 50, "bob": 40})
    await _read(cached)
    await cached.create_player("dan")
    assert (await cached.submit("dan", "b", 45))["errors"] == []
    data, calls = await _read(cached)
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("dan", 45, 2), ("bob", 40, 3)]


@each_layout
async def test_a_play_through_the_instance_evicts_only_the_pages_it_reaches(
    cached: Api,
) -> None:
    await _board(cached, {"ann": 50, "bob": 40, "cat": 30, "dan": 20})
    counted = TOP.replace("name topScores", "name entryCount topScores")
    await _read(cached)
    await _read(cached, counted)
    # A better score of an entry below the full page: neither answer is evicted.
    assert (await cached.submit("dan", "b", 25))["errors"] == []
    assert (await _read(cached))[1] == 0
    assert (await _read(cached, counted))[1] == 0
    # A first entry below the page: the page stays, the count goes.
    await cached.create_player("eve")
    assert (await cached.submit("eve", "b", 5))["errors"] == []
    assert (await _read(cached))[1] == 0
    data, calls = await _read(cached, counted)
    assert calls > 0
    assert data["leaderboard"]["entryCount"] == 5
    # Into the page: both are evicted, and the next reads show it.
    assert (await cached.submit("eve", "b", 45))["errors"] == []
    for query in (TOP, counted):
        data, calls = await _read(cached, query)
        assert calls > 0
        assert _top(data) == [("ann", 50, 1), ("eve", 45, 2), ("bob", 40, 3)]


async def test_a_private_field_is_never_served_to_another_role(cached: Api) -> None:
    await _board(cached, {"ann": 50})
    emails = """{ leaderboard(id: "b") { topScores(first: 5) {
        edges { node { player { name email } } } } } }"""

    def email(body: Any) -> Any:
        return body["data"]["leaderboard"]["topScores"]["edges"][0]["node"]["player"]["email"]

    keyed = await cached.raw(emails)
    assert email(keyed) == "ann@x.example"
    assert email(await cached.raw(emails, key=None)) is None
    assert email(await cached.raw(emails)) == "ann@x.example"
    # A document every role may have cached is cached once per role.
    await _read(cached, key=None)
    assert (await _read(cached, key=ADMIN_KEYS[0]))[1] > 0
    assert (await _read(cached, key=None))[1] == 0
    assert (await _read(cached, key=ADMIN_KEYS[0]))[1] == 0


async def test_reads_the_cache_cannot_keep_exact_are_never_stored(cached: Api) -> None:
    await _board(cached, {"ann": 50, "bob": 40, "cat": 30})
    data, _ = await _read(cached, first=1)
    cursor = data["leaderboard"]["topScores"]["pageInfo"]["endCursor"]
    later = """query Later($after: String) { leaderboard(id: "b") { topScores(first: 1,
        after: $after) { edges { node { score } } } } }"""
    rank = '{ leaderboard(id: "b") { rankOf(playerId: "bob") { rank } } }'
    missing = '{ leaderboard(id: "no such board!") { name } }'
    for _ in range(2):
        cached.reset_calls()
        assert "errors" not in await cached.raw(later, {"after": cursor})
        assert sum(cached.calls.values()) > 0
        cached.reset_calls()
        assert "errors" not in await cached.raw(rank)
        assert sum(cached.calls.values()) > 0
        assert "errors" in await cached.raw(missing)
    assert len(_responses(cached)) == 1  # the first page only


# Two instances on one table and one Redis.


@dataclass
class Fleet:
    a: Api
    b: Api
    redis: Redis
    heard: list[Notice]
    """Every notice B's feed has delivered."""

    async def heard_of(self, player: str, score: int) -> None:
        """Wait until B has heard of the player's entry with that score."""
        await _until(lambda: any(n.player == player and n.after == score for n in self.heard))


@pytest.fixture
async def fleet(settings: Settings, redis_url: str, partitions: int) -> AsyncIterator[Fleet]:
    async with two_instances(settings, redis_url, partitions) as served:
        yield served


@asynccontextmanager
async def two_instances(
    settings: Settings, redis_url: str, partitions: int = 1
) -> AsyncIterator[Fleet]:
    """Two instances on the settings' table and one Redis, each running a projector (the
    lease lets one project) and a connected feed reader."""
    shared = replace(settings, redis_url=redis_url)
    redis = Redis.from_url(redis_url)
    try:
        async with (
            _serve(shared, None, project_ranks=True, partitions=partitions) as a,
            _serve(shared, None, project_ranks=True, partitions=partitions) as b,
        ):
            await _until(lambda: _feed(a).connected and _feed(b).connected)
            fleet = Fleet(a, b, redis, [])
            _feed(b).on_notice(fleet.heard.append)
            yield fleet
    finally:
        await redis.aclose()


@each_layout
async def test_a_play_through_one_instance_evicts_the_other_s_page_only_if_it_reaches_it(
    fleet: Fleet,
) -> None:
    a, b = fleet.a, fleet.b
    await _board(a, {"ann": 50, "bob": 40, "cat": 30})
    await a.create_player("dan")
    await a.create_player("eve")
    for player, score in (("ann", 50), ("bob", 40), ("cat", 30)):
        await fleet.heard_of(player, score)
    data, _ = await _read(b, first=2)
    assert (await _read(b, first=2))[1] == 0
    assert (await a.submit("dan", "b", 10))["errors"] == []  # below the page
    await fleet.heard_of("dan", 10)
    assert await _read(b, first=2) == (data, 0)
    assert (await a.submit("eve", "b", 45))["errors"] == []  # into the page
    await fleet.heard_of("eve", 45)
    data, calls = await _read(b, first=2)
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("eve", 45, 2)]


async def test_a_feed_that_lost_its_place_clears_the_cache(fleet: Fleet) -> None:
    b = fleet.b
    await _board(fleet.a, {"ann": 50})
    await fleet.heard_of("ann", 50)
    await _read(b)
    assert len(_responses(b)) == 1
    resyncs = _feed(b).resyncs
    assert await _kill_feed_readers(fleet.redis) == 2
    await _until(lambda: _feed(b).resyncs > resyncs)
    assert len(_responses(b)) == 0
    assert (await _read(b))[1] > 0


async def test_the_staleness_of_the_other_instance_s_cached_page(fleet: Fleet) -> None:
    """From a play's answer through A to the first read through B that shows it, B's page
    being cached: measured, not asserted against a bound (printed for
    docs/how-to/response-cache.md, -s)."""
    a, b = fleet.a, fleet.b
    players = [f"p{i}" for i in range(5)]
    await _board(a, {p: 1 for p in players})
    delays: list[float] = []
    for n in range(30):
        player, score = players[n % 5], 100 + n
        await _read(b)  # cached (or cached again) before the play
        assert (await a.submit(player, "b", score))["improved"]
        committed = time.monotonic()
        while _top((await _read(b))[0])[0][:2] != (player, score):
            assert time.monotonic() - committed < ARRIVAL, "B never showed the play"
            await asyncio.sleep(0.002)
        delays.append(time.monotonic() - committed)
    cuts = statistics.quantiles(delays, n=100, method="inclusive")
    print(
        f"\ncached page staleness, play answered through A -> first read through B showing it,"
        f" {len(delays)} plays: p50 {cuts[49] * 1000:.0f} ms, p99 {cuts[98] * 1000:.0f} ms,"
        f" max {max(delays) * 1000:.0f} ms"
    )
    assert len(delays) == 30


async def test_writes_by_an_operator_and_a_new_board_are_in_the_next_read(cached: Api) -> None:
    await _board(cached, {"ann": 50, "bob": 40, "cat": 30})
    await _read(cached)
    assert "errors" not in await _remove(cached, "b", "bob")
    data, calls = await _read(cached)
    assert calls > 0
    assert _top(data) == [("ann", 50, 1), ("cat", 30, 2)]
    named = '{ leaderboard(id: "new") { name entryCount } }'
    assert (await cached.gql(named))["leaderboard"] is None
    await cached.create_board("new")
    assert (await cached.gql(named))["leaderboard"] == {"name": "new", "entryCount": 0}


async def test_a_cached_answer_is_charged_to_the_anonymous_allowance(settings: Settings) -> None:
    """Without Redis the cache is on only when asked for; a hit still costs its points."""
    cost = document_cost(GRAPHQL_SCHEMA, parse(TOP), None, {"first": 3})
    limits = replace(
        settings.limits,
        anonymous_cost_burst=cost + cost // 2,
        anonymous_cost_per_second=0.001,
        trusted_proxy_hops=1,
    )
    async with _serve(replace(settings, limits=limits, cache_mb=1), None) as api:
        api.clock.hold()  # no point regained between the requests
        await _board(api, {"ann": 50})

        async def anonymous(address: str) -> tuple[int, Any]:
            api.reset_calls()
            response = await api.http.post(
                "/graphql",
                json={"query": TOP, "variables": {"first": 3}},
                headers={"X-Forwarded-For": address},
            )
            return response.status, await response.json()

        status, first = await anonymous("198.51.100.7")
        assert status == 200
        assert sum(api.calls.values()) > 0
        status, refused = await anonymous("198.51.100.7")
        assert status == 429
        assert refused["errors"][0]["extensions"]["code"] == "THROTTLED"
        status, again = await anonymous("198.51.100.8")  # its own allowance: a hit
        assert (status, again["data"], api.calls) == (200, first["data"], {})


def test_the_cache_is_on_by_default_only_with_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LEADERBOARD_REDIS_URL", "LEADERBOARD_CACHE_MB", "LEADERBOARD_CACHE_MAX_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    assert Settings.from_env().cache_bytes == 0
    monkeypatch.setenv("LEADERBOARD_REDIS_URL", "redis://127.0.0.1:6379")
    assert Settings.from_env().cache_bytes == 64 * MB
    monkeypatch.setenv("LEADERBOARD_CACHE_MB", "8")
    assert Settings.from_env().cache_bytes == 8 * MB
    monkeypatch.setenv("LEADERBOARD_CACHE_MAX_SECONDS", "0")
    assert Settings.from_env().cache_bytes == 0
    monkeypatch.delenv("LEADERBOARD_REDIS_URL")
    monkeypatch.setenv("LEADERBOARD_CACHE_MAX_SECONDS", "5")
    configured = Settings.from_env()
    assert (configured.cache_bytes, configured.cache_max_seconds) == (8 * MB, 5)
    monkeypatch.setenv("LEADERBOARD_CACHE_MB", "lots")
    with pytest.raises(ValueError, match="LEADERBOARD_CACHE_MB"):
        Settings.from_env()
