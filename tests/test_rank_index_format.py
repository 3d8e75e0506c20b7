"""The rank index's format: members of a 6-byte tie and the player id, and each player's
record (tie and version) in small listpack buckets spread by linear hashing. A move, a replayed
or reordered record, a removal and an erasure leave exactly what the newest change says; a
rebuild replays the changes that came meanwhile; a board of the earlier format is set aside and
rebuilt; and a board takes no more memory than the bound below."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from redis.asyncio import Redis

from dynamo.leaderboards import get_leaderboard
from rankindex import maintenance
from rankindex.index import RankIndex
from rankindex.keys import (
    LAYOUT,
    LEGACY_META,
    OUTDATED,
    PENDING,
    READY,
    STATE,
    ZSET,
    member,
    member_text,
)
from rankindex.players import FILL, Layout, bucket_key, layout_for
from rankindex.projection import Change, Forget, Put, Remove
from tests.conftest import UNBOUNDED_LAG_MS, Indexed

BOARD = "b"


@pytest.fixture
async def index(redis_url: str) -> AsyncIterator[RankIndex]:
    """An index of its own namespace, on the session's Redis, with no table behind it, whose
    projector counts as caught up."""
    redis = Redis.from_url(redis_url)
    try:
        index = RankIndex(redis, f"format-{uuid.uuid4().hex[:8]}", max_lag_ms=UNBOUNDED_LAG_MS)
        await index.caught_up()
        yield index
    finally:
        await redis.aclose()


def _tie(n: int) -> str:
    return str(8_000_000_000_000 + n).zfill(13)


def _put(player: str, version: int, score: int, tie: int, board: str = BOARD) -> Put:
    return Put(board, player, version, _tie(tie), score, None, 0)


async def _members(index: RankIndex, board: str = BOARD) -> dict[str, int]:
    zset = ZSET.format(ns=index.namespace, board=board)
    pairs: Any = await index.redis.zrange(zset, 0, -1, withscores=True)
    return {member_text(bytes(m)): int(s) for m, s in pairs}


async def _ready(index: RankIndex, board: str = BOARD) -> None:
    await index.redis.set(STATE.format(ns=index.namespace, board=board), READY)


async def test_a_move_replaces_the_member_and_the_record(index: RankIndex) -> None:
    await _ready(index)
    assert await index.apply([_put("ann", 1, 50, tie=10), _put("bob", 1, 40, tie=11)]) == 2
    # ann improves: a new score attained later, so a new tie and a new member.
    assert await index.apply([_put("ann", 2, 70, tie=5)]) == 1
    assert await _members(index) == {f"{_tie(5)}#ann": 70, f"{_tie(11)}#bob": 40}
    assert await index.record(BOARD, "ann") == (2, f"{_tie(5)}#ann")
    # The member orders as the table's keys do: the tie's bytes, then the player id.
    assert member(_tie(5), "ann") < member(_tie(11), "ann") < member(_tie(11), "bob")
    ranked = await index.ranks({BOARD: [("ann", None), ("bob", None), ("cy", "60")]})
    assert ranked is not None
    ann, bob, cy = ranked[BOARD]
    assert (ann and ann.better, bob and bob.better, cy and cy.better) == (0, 1, 1)
    assert ann is not None
    assert ann.member == f"{_tie(5)}#ann"
    assert cy is not None
    assert (cy.member, cy.total) == (None, 3)


async def test_replayed_and_reordered_records_change_nothing(index: RankIndex) -> None:
    await _ready(index)
    history = [_put("ann", v, 10 * v, tie=100 - v) for v in range(1, 6)]
    assert await index.apply(history) == 5
    # A projector restarted from its checkpoint delivers old records again: all older.
    assert await index.apply(history) == 0
    assert await index.apply([history[1], history[0]]) == 0
    assert await _members(index) == {f"{_tie(95)}#ann": 50}
    # Records in any order into a fresh board end as the newest says.
    shuffled = history[:]
    random.Random(3).shuffle(shuffled)
    await index.apply([_put_on("c", p) for p in shuffled])
    await index.apply([_put_on("c", p) for p in reversed(history)])
    assert await _members(index, "c") == {f"{_tie(95)}#ann": 50}


def _put_on(board: str, change: Put) -> Put:
    return Put(board, change.player, change.version, change.tie, change.score, None, 0)


async def test_a_removal_keeps_the_version_and_an_erasure_forgets_the_player(
    index: RankIndex,
) -> None:
    await _ready(index)
    await index.apply([_put("ann", 3, 30, tie=1), _put("bob", 1, 20, tie=2)])
    assert await index.apply([Remove(BOARD, "ann", 4)]) == 1
    assert await _members(index) == {f"{_tie(2)}#bob": 20}
    assert await index.record(BOARD, "ann") == (4, None)
    # A replayed put from before the removal is older: it stays removed.
    assert await index.apply([_put("ann", 3, 30, tie=1)]) == 0
    assert await _members(index) == {f"{_tie(2)}#bob": 20}
    # The next entry continues the versions.
    assert await index.apply([_put("ann", 5, 35, tie=0)]) == 1
    # An erasure: nothing of the player is left, not even its version.
    assert await index.apply([Forget(BOARD, "ann"), Forget(BOARD, "nobody")]) == 1
    assert await _members(index) == {f"{_tie(2)}#bob": 20}
    assert await index.record(BOARD, "ann") is None
    layout = LAYOUT.format(ns=index.namespace, board=BOARD)
    assert await index.redis.hget(layout, "players") == b"1"
    # A guard written afterwards starts its versions again, at 1.
    assert await index.apply([_put("ann", 1, 5, tie=50)]) == 1
    assert await index.record(BOARD, "ann") == (1, f"{_tie(50)}#ann")


async def test_buckets_split_as_the_board_grows_and_stay_listpacks(index: RankIndex) -> None:
    await _ready(index)
    players = [f"p{i:05d}" for i in range(3_000)]
    for start in range(0, len(players), 500):
        await index.apply(
            [_put(p, 1, i, tie=i) for i, p in enumerate(players[start : start + 500])]
        )
    layout_key = LAYOUT.format(ns=index.namespace, board=BOARD)
    raw: list[Any] = await index.redis.hmget(layout_key, ["gen", "level", "split", "players"])
    gen, level, split, records = (int(v) for v in raw)
    layout = Layout(gen, level, split)
    assert records == 3_000
    # Linear hashing: one bucket more for every FILL records past the first bucket's.
    assert layout.buckets == records // FILL
    sizes = []
    for i in range(layout.buckets):
        key = bucket_key(index.namespace, BOARD, layout, i)
        sizes.append(await index.redis.hlen(key))
        assert await index.redis.object("encoding", key) == b"listpack"
    assert sum(sizes) == records
    assert max(sizes) <= 2 * FILL + 40
    # Every record is where the readers look for it (the same hash in Python and Lua).
    for p in random.Random(1).sample(players, 100):
        found = await index.record(BOARD, p)
        assert found is not None
        assert found[0] == 1


async def test_a_rebuild_replays_the_changes_that_came_meanwhile(indexed: Indexed) -> None:
    api, index = indexed.api, indexed.index
    for p in ("a", "b", "c"):
        await api.create_player(p)
    await api.create_board(BOARD, operator="LATEST")
    for p, score in (("a", 30), ("b", 20), ("c", 10)):
        await api.submit(p, BOARD, score)
    await indexed.projector.drain()
    zset, state, _, pending = (
        t.format(ns=index.namespace, board=BOARD) for t in (ZSET, STATE, LAYOUT, PENDING)
    )
    ties = {p: (await index.record(BOARD, p) or (0, ""))[1] for p in ("a", "b", "c")}

    async def script(keys: list[str], args: list[Any]) -> Any:
        if args[0] == "finish":
            # While the board is building, changes are queued: one newer than the table's
            # entry (b's version 2) and one the rebuild read already (c's version 1, replayed).
            assert await index.redis.get(state) == b"building/2"
            newer = Put(BOARD, "b", 2, _tie(1), 99, None, 0)
            replayed = Put(BOARD, "c", 1, _tie(2), 1, None, 0)
            assert await index.apply([newer, replayed]) == 0
            assert await index.redis.llen(pending) == 2
        return await index._apply(keys=keys, args=args)

    built = await maintenance.rebuild(index.redis, index.namespace, api.db, BOARD, script)
    assert built == 3
    assert await index.redis.get(state) == READY.encode()
    assert await index.redis.llen(pending) == 0
    assert await _members(index) == {
        str(ties["a"]): 30,
        f"{_tie(1)}#b": 99,
        str(ties["c"]): 10,
    }
    assert await index.record(BOARD, "b") == (2, f"{_tie(1)}#b")
    # The generation the rebuild replaced is gone; the new one holds every record.
    layout = await _layout(index)
    assert layout.gen == 2
    old = bucket_key(index.namespace, BOARD, Layout(1, 0, 0), 0)
    assert not await index.redis.exists(old)
    assert await index.redis.zcard(zset) == 3


async def _layout(index: RankIndex, board: str = BOARD) -> Layout:
    key = LAYOUT.format(ns=index.namespace, board=board)
    raw: list[Any] = await index.redis.hmget(key, ["gen", "level"])
    return Layout(int(raw[0]), int(raw[1]))


async def test_a_board_of_the_earlier_format_is_set_aside_then_rebuilt(indexed: Indexed) -> None:
    api, index = indexed.api, indexed.index
    for p in ("a", "b"):
        await api.create_player(p)
    await api.create_board(BOARD)
    await api.submit("a", BOARD, 10)
    await indexed.projector.drain()
    zset, state, meta = (
        t.format(ns=index.namespace, board=BOARD) for t in (ZSET, STATE, LEGACY_META)
    )
    # The board as the first format left it: text members, the version hash, 'ready'.
    await index.redis.delete(zset, LAYOUT.format(ns=index.namespace, board=BOARD))
    await index.redis.zadd(zset, {f"{_tie(7)}#a": 10})
    await index.redis.hset(meta, "a", f"1|{_tie(7)}#a")
    await index.redis.set(state, "ready")
    board = await get_leaderboard(api.db, BOARD)
    assert board is not None
    # Readers do not use it: ranks come from the table, and are exact.
    assert await index.ranks({BOARD: [("a", None)]}) == {}
    rank = await api.gql('{ player(id: "a") { rank(leaderboardId: "b") { rank total } } }')
    assert rank["player"]["rank"] == {"rank": 1, "total": 1}
    # The first change that meets it deletes its keys and marks it outdated.
    await api.submit("b", BOARD, 20)
    await indexed.projector.drain()
    assert await index.redis.get(state) == OUTDATED.encode()
    assert not await index.redis.exists(zset, meta)
    # A rebuild makes it a board of this format, equal to the table.
    assert await index.rebuild(api.db, BOARD) == 2
    assert await index.redis.get(state) == READY.encode()
    assert (await index.verify(api.db, BOARD)).ok
    ranked = await index.ranks({BOARD: [("a", None), ("b", None)]})
    assert ranked is not None
    assert [r and r.better + 1 for r in ranked[BOARD]] == [2, 1]


BOUND_ENTRIES = 20_000
BOUND = 140.0
"""Bytes per entry a board of 20,000 entries may take, every key by MEMORY USAGE (Redis 7.0,
jemalloc). Of the 120 bytes per entry the index is allowed, the sorted set itself takes what no
format of it avoids: a skiplist node (53 bytes on average), a dict entry (24) and the member's
allocation (16 bytes for a member of up to 14: a 6-byte tie and an 8-character id), plus its
dict's table, 8 bytes a slot: 2**15 slots at this size, 13 bytes an entry (8.4 at a million,
13.4 at 10 million). The player records add 22 to 23 bytes (id, tie, version and the buckets'
framing). That is about 131 here; the bound leaves 7% for a Redis that lays memory out a
little differently. The earlier format took 220 here (a 22-byte member and a hash table of
versions)."""
RECORDS_BOUND = 24.0


async def _board_bytes(redis: Redis, keys: Sequence[str]) -> int:
    total = 0
    async with redis.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.memory_usage(key, samples=0)
        for used in await pipe.execute():
            total += int(used or 0)
    return total


@pytest.mark.parametrize("path", ["rebuild", "stream"])
async def test_a_board_takes_no_more_memory_than_the_bound(index: RankIndex, path: str) -> None:
    """Both ways a board is written: whole (a rebuild's layout) and change by change (the
    projector's, its buckets split as it grows)."""
    ns, redis = index.namespace, index.redis
    zset, state, layout_key = (t.format(ns=ns, board=BOARD) for t in (ZSET, STATE, LAYOUT))
    players = [f"p{i:07d}" for i in range(BOUND_ENTRIES)]
    rng = random.Random(7)
    ties = [8_000_000_000_000 + rng.randrange(10**10) for _ in players]
    scores = [rng.randrange(10**10) for _ in players]
    await _ready(index)
    if path == "rebuild":
        layout = layout_for(BOUND_ENTRIES, gen=1)
        rows = [(p, str(t), s, 1) for p, t, s in zip(players, ties, scores, strict=True)]
        for start in range(0, len(rows), 5_000):
            await maintenance.write_rows(
                redis, ns, BOARD, zset, layout, rows[start : start + 5_000]
            )
        fields = {"gen": 1, "level": layout.level, "split": 0, "players": BOUND_ENTRIES}
        await redis.hset(layout_key, mapping=fields)  # type: ignore[arg-type]
    else:
        changes: list[Change] = [
            Put(BOARD, p, 1, str(t), s, None, 0)
            for p, t, s in zip(players, ties, scores, strict=True)
        ]
        for start in range(0, len(changes), 2_000):
            await index.apply(changes[start : start + 2_000])
        layout = await _layout(index)
        raw = await redis.hget(layout_key, "split")
        layout = Layout(layout.gen, layout.level, int(raw or 0))
    assert await redis.zcard(zset) == BOUND_ENTRIES
    buckets = [bucket_key(ns, BOARD, layout, i) for i in range(layout.buckets)]
    for key in buckets[:: max(1, len(buckets) // 50)]:
        assert await redis.object("encoding", key) == b"listpack"
    records = await _board_bytes(redis, buckets)
    total = records + await _board_bytes(redis, [zset, state, layout_key])
    assert records / BOUND_ENTRIES <= RECORDS_BOUND
    assert total / BOUND_ENTRIES <= BOUND
