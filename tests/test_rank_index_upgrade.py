"""Boards indexed in the first format, upgraded without an operator: the projector of
``leaderboard serve`` (and ``rank-indexer``) rebuilds them by itself, one at a time, while the
stream's changes go on; ``rank-index rebuild --outdated`` does it where the projector cannot
read the table. Each board is then answered from the index with no DynamoDB call, exactly,
and plays made during its rebuild are in it. A rebuild holds the board's claim: a second one
is refused, and one that lost its claim changes nothing. Stale boards wait for an operator.
During a rolling upgrade a projector of the first format (a process not yet upgraded) may write
to a board of this format: readers then count in the table, and the board is rebuilt by
itself."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from dynamo.db import Db
from dynamo.leaderboards import get_leaderboard
from dynamo.scores import ScoreItem, holds_score, rank_value, tie_value
from leaderboard.config import Settings, default_cache_dir
from rankindex import maintenance
from rankindex.index import RankIndex, RebuildBusy, WrittenByEarlierVersion
from rankindex.keys import (
    LEGACY_META,
    OUTDATED,
    PENDING,
    READY,
    REBUILD,
    STALE,
    STATE,
    ZSET,
)
from rankindex.lease import LEASE_MS, Lease
from rankindex.projector import Projector
from rankindex.upgrade import RETRY_SECONDS, Due, Upgrader
from tests.conftest import Indexed, _serve
from tests.scan import scan_items

PLAYERS = [f"p{i:02d}" for i in range(8)]
FIRST_FORMAT_APPLY = (Path(__file__).parent / "data" / "first_format_apply.lua").read_text()
"""The apply script of the first format (rankindex/apply.lua as that format shipped it), which
a process not yet upgraded runs."""
UPGRADE_WAIT = 120.0
"""Seconds a test waits for an upgrade it expects: only a guard against a hang, generous for a
loaded machine."""


async def _eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + UPGRADE_WAIT
    while not await check():
        assert time.monotonic() < deadline, f"not within the timeout: {what}"
        await asyncio.sleep(0.05)


async def _entries(db: Db, board: str) -> list[ScoreItem]:
    items = await scan_items(db)
    return [
        ScoreItem.model_validate(i) for i in items if holds_score(i) and i["leaderboardId"] == board
    ]


async def _oracle(db: Db, board_id: str) -> dict[str, int]:
    """Each entrant's rank, counted by brute force from the table's entries."""
    board = await get_leaderboard(db, board_id)
    assert board is not None
    entries = await _entries(db, board_id)

    def better(a: int, b: int) -> bool:
        return a > b if board.sort_order.value == "DESC" else a < b

    return {e.player_id: 1 + sum(better(o.score, e.score) for o in entries) for e in entries}


async def _board_with_entries(indexed: Indexed, board: str, players: list[str]) -> None:
    """A board with an entry of each player, indexed by the projector in this format."""
    await indexed.api.create_board(board)
    for n, player in enumerate(players):
        await indexed.api.submit(player, board, 10 * (n % 5) + n)
    await indexed.projector.drain()
    assert await _state(indexed.index, board) == READY


async def _players(indexed: Indexed, players: list[str] = PLAYERS) -> None:
    for player in players:
        await indexed.api.create_player(player)


async def _state(index: RankIndex, board: str) -> str | None:
    raw = await index.redis.get(STATE.format(ns=index.namespace, board=board))
    return None if raw is None else raw.decode() if isinstance(raw, bytes) else str(raw)


async def _board_key_names(index: RankIndex, board: str) -> list[str]:
    found = index.redis.scan_iter(match=f"rank:{index.namespace}:{{{board}}}*", count=1000)
    return sorted([bytes(k).decode() async for k in found])


async def _as_first_format(index: RankIndex, db: Db, board_id: str, state: str = "ready") -> None:
    """Replace the board's index with the keys the first format wrote for the table's entries:
    the sorted set with members ``<tieValue>#<playerId>`` scored by the rank value, the version
    hash (player id -> ``<version>|<member>``) and the board's state."""
    board = await get_leaderboard(db, board_id)
    assert board is not None
    redis, ns = index.redis, index.namespace
    keys = await _board_key_names(index, board_id)
    if keys:
        await redis.delete(*keys)
    zset, meta, state_key = (t.format(ns=ns, board=board_id) for t in (ZSET, LEGACY_META, STATE))
    members: dict[str, int] = {}
    versions: dict[str, str] = {}
    for entry in await _entries(db, board_id):
        member = f"{tie_value(entry.attained_at)}#{entry.player_id}"
        members[member] = int(rank_value(entry.score, board.score_width, board.sort_order))
        versions[entry.player_id] = f"{entry.version}|{member}"
    await redis.zadd(zset, members)
    await redis.hset(meta, mapping=versions)  # type: ignore[arg-type]
    await redis.set(state_key, state)


async def _ranked_from_the_index(indexed: Indexed, board: str) -> None:
    """Every entrant's rank and the board's total equal the brute-force count, each answered
    with no DynamoDB call (from the index: COUNT would query)."""
    api = indexed.api
    expected = await _oracle(api.db, board)
    assert expected
    for player, rank in expected.items():
        api.reset_calls()
        answer = await api.gql(
            "query($p: ID!, $b: ID!) { player(id: $p) { rank(leaderboardId: $b) { rank total } } }",
            {"p": player, "b": board},
        )
        assert answer["player"]["rank"] == {"rank": rank, "total": len(expected)}, player
        assert api.calls == {}, f"{player}'s rank on {board} read the table"
    assert (await indexed.index.verify(api.db, board)).ok


def _rebuilt_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        str(getattr(r, "board", ""))
        for r in caplog.records
        if r.name == "leaderboard.rankindex" and getattr(r, "entries", None) is not None
    ]


async def test_the_running_projector_rebuilds_the_boards_of_the_first_format(
    indexed: Indexed, settings: Settings, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Boards the first format indexed, as an upgraded deployment finds them: one complete
    (``ready``), one with a rebuild of that format under way and changes it queued in its own
    encoding. The projector that ``leaderboard serve`` runs rebuilds both without any command,
    with a log line each, though no change reaches them."""
    caplog.set_level(logging.INFO, logger="leaderboard.rankindex")
    api, index = indexed.api, indexed.index
    await _players(indexed)
    await _board_with_entries(indexed, "old", PLAYERS)
    await _board_with_entries(indexed, "old-building", PLAYERS[:5])
    await _as_first_format(index, api.db, "old")
    await _as_first_format(index, api.db, "old-building", state="building")
    pending = PENDING.format(ns=index.namespace, board="old-building")
    await index.redis.rpush(pending, '["put","p00","9","x#p00","1",""]')
    zset = ZSET.format(ns=index.namespace, board="old-building")
    await index.redis.zadd(f"{zset}:built", {"0000000000001#p00": 1})
    await index.redis.hset(f"{zset}:meta:built", "p00", "1|0000000000001#p00")
    # Readers do not use them: ranks come from COUNT queries, which read the table.
    api.reset_calls()
    counted = await api.gql('{ player(id: "p00") { rank(leaderboardId: "old") { rank } } }')
    assert counted["player"]["rank"]["rank"] == (await _oracle(api.db, "old"))["p00"]
    assert api.calls.get("Query", 0) >= 1

    upgraded = replace(settings, redis_url=redis_url)
    async with _serve(upgraded, None, project_ranks=True):

        async def both_rebuilt() -> bool:
            return sorted(_rebuilt_lines(caplog)) == ["old", "old-building"]

        await _eventually(both_rebuilt, "both boards rebuilt")
        assert await _state(index, "old") == await _state(index, "old-building") == READY
        await _ranked_from_the_index(indexed, "old")
        await _ranked_from_the_index(indexed, "old-building")
    assert sorted(_rebuilt_lines(caplog)) == ["old", "old-building"], "each board once"
    left = [pending, f"{zset}:built", f"{zset}:meta:built"]
    left += [LEGACY_META.format(ns=index.namespace, board=b) for b in ("old", "old-building")]
    assert not await index.redis.exists(*left), "nothing of the first format is left"


@dataclass
class Projecting:
    """A projector of the test's table with its own client, lease and upgrader, as one
    process of ``leaderboard serve`` or ``rank-indexer`` runs it."""

    index: RankIndex
    lease: Lease
    upgrader: Upgrader
    projector: Projector


@pytest.fixture
async def projecting(indexed: Indexed, redis_url: str) -> AsyncIterator[Callable[..., Projecting]]:
    clients: list[Redis] = []

    def make(clock: Callable[[], float] = time.monotonic, lease_ms: int = LEASE_MS) -> Projecting:
        redis = Redis.from_url(redis_url)
        clients.append(redis)
        index = RankIndex(redis, indexed.index.namespace)
        lease = Lease(redis, index.namespace, ttl_ms=lease_ms)
        upgrader = Upgrader(index, indexed.api.db, lease, clock=clock)
        projector = Projector(indexed.stream, index, lease, upgrader=upgrader)
        return Projecting(index, lease, upgrader, projector)

    try:
        yield make
    finally:
        for redis in clients:
            await redis.aclose()


async def test_a_change_that_sets_a_board_aside_has_it_rebuilt_at_once(
    indexed: Indexed, projecting: Callable[..., Projecting]
) -> None:
    """The projector's scan has passed when a board of the first format turns up; the first
    change that meets it sets it aside (outdated), and the upgrader rebuilds it next, with
    that change in it."""
    api = indexed.api
    await _players(indexed)
    await _board_with_entries(indexed, "late", PLAYERS[:6])
    one = projecting()
    assert await one.lease.hold()
    assert await one.upgrader.step() == 0, "nothing of an earlier format yet"
    await _as_first_format(indexed.index, api.db, "late")
    assert await one.upgrader.step() == 0, "found by a scan only, which was made"

    assert (await api.submit("p07", "late", 99))["errors"] == []
    await one.projector.drain()
    assert await _state(one.index, "late") == OUTDATED
    assert await one.upgrader.step() == 1
    assert await one.upgrader.step() == 0
    assert await _state(one.index, "late") == READY
    await _ranked_from_the_index(indexed, "late")
    assert (await _oracle(api.db, "late"))["p07"] == 1


async def test_stale_boards_wait_for_an_operator_and_unfinished_rebuilds_are_redone(
    indexed: Indexed, projecting: Callable[..., Projecting], caplog: pytest.LogCaptureFixture
) -> None:
    """A board ``verify`` marked stale, in either format, is left as it is; a rebuild that
    stopped before its end is redone (its queued changes replayed, what it wrote deleted); a
    board whose claim another rebuild holds is looked at again once that claim may have
    lapsed; a board the table does not have is left, with a warning."""
    caplog.set_level(logging.INFO, logger="leaderboard.rankindex")
    api, index = indexed.api, indexed.index
    await index.redis.set(STATE.format(ns=index.namespace, board="gone"), "ready")
    await _players(indexed)
    for board in ("stale-1", "stale-2", "cut", "held"):
        await _board_with_entries(indexed, board, PLAYERS[:4])
    await _as_first_format(index, api.db, "stale-1", state="stale")
    await index.redis.set(STATE.format(ns=index.namespace, board="stale-2"), STALE)
    await _as_first_format(index, api.db, "held")
    other = Lease(
        index.redis, index.namespace, key=REBUILD.format(ns=index.namespace, board="held")
    )
    assert await other.hold()

    # A rebuild of "cut" that stops after its first chunk (its process killed).
    async def stopped(keys: list[str], args: list[Any]) -> Any:
        if args[0] == "finish":
            raise ConnectionError("the rebuild's process stopped")
        return await index._apply(keys=keys, args=args)

    with pytest.raises(ConnectionError):
        await maintenance.rebuild(index.redis, index.namespace, api.db, "cut", stopped)
    assert await _state(index, "cut") == "building/2"
    left_behind = [k for k in await _board_key_names(index, "cut") if ":built:" in k]
    assert left_behind
    # A play while it is building is queued.
    assert (await api.submit("p05", "cut", 77))["errors"] == []
    await indexed.projector.drain()
    assert await index.redis.llen(PENDING.format(ns=index.namespace, board="cut")) == 1

    now = [1000.0]
    one = projecting(clock=lambda: now[0])
    assert await one.lease.hold()
    assert await one.upgrader.step() == 1, "the unfinished rebuild, redone"
    assert await _state(index, "cut") == READY
    assert not [k for k in await _board_key_names(index, "cut") if ":built:" in k]
    await _ranked_from_the_index(indexed, "cut")
    assert (await _oracle(api.db, "cut"))["p05"] == 1
    assert await _state(index, "stale-1") == await _state(index, "stale-2") == STALE
    assert await _state(index, "held") == "ready", "another rebuild holds it"
    assert await _state(index, "gone") == "ready"
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [getattr(r, "board", None) for r in warned] == ["gone"]

    await other.release()
    assert await one.upgrader.step() == 0, "not looked at again before the claim may lapse"
    now[0] += RETRY_SECONDS
    assert await one.upgrader.step() == 1
    await _ranked_from_the_index(indexed, "held")
    assert await one.upgrader.step() == 0
    assert _rebuilt_lines(caplog) == ["cut", "held"]
    assert await _state(index, "stale-1") == await _state(index, "stale-2") == STALE


async def test_a_rebuild_that_lost_its_claim_changes_nothing(
    indexed: Indexed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rebuilds of one board: the second is refused while the first holds the claim. A
    first one paused past its claim, which a second took and finished with, stops at its next
    step and deletes what it wrote; the board is the second's, equal to the table."""
    api, index = indexed.api, indexed.index
    ns = index.namespace
    await _players(indexed)
    await _board_with_entries(indexed, "f", PLAYERS)
    await _as_first_format(index, api.db, "f")
    monkeypatch.setattr(maintenance, "_CHUNK", 3)
    claim = REBUILD.format(ns=ns, board="f")
    write_rows = maintenance.write_rows
    seen: list[str] = []

    async def paused_past_its_claim(*args: Any) -> None:
        await write_rows(*args)
        seen.append(args[3])  # the sorted set written: names the rebuild's generation
        if len(seen) == 1:
            with pytest.raises(RebuildBusy):
                await index.rebuild(api.db, "f")
            assert await _state(index, "f") == "building/2"
            await index.redis.delete(claim)  # the first rebuild's claim lapses
            assert await index.rebuild(api.db, "f") == len(PLAYERS)

    monkeypatch.setattr(maintenance, "write_rows", paused_past_its_claim)
    with pytest.raises(RebuildBusy):
        await index.rebuild(api.db, "f")
    first, second = seen[0], seen[1]
    assert first != second, "each rebuild writes a generation of its own"
    assert seen[1:] == [second] * (len(seen) - 1), "the first wrote nothing after losing it"
    assert await _state(index, "f") == READY
    names = await _board_key_names(index, "f")
    assert not [n for n in names if ":built:" in n], names
    first_gen = first.rsplit(":", 1)[1]
    assert not [n for n in names if f":p:{first_gen}:" in n], names
    assert not await index.redis.exists(claim)
    await _ranked_from_the_index(indexed, "f")

    # A rebuild whose claim another takes between its last step and its swap: the swap is
    # refused, and the board is left building, for the claim's holder (or the next rebuild).
    monkeypatch.setattr(maintenance, "write_rows", write_rows)
    assert (await api.submit("p00", "f", 500))["errors"] == []
    taker = Lease(index.redis, ns, key=claim)

    async def taken_before_the_swap(keys: list[str], args: list[Any]) -> Any:
        if args[0] == "finish":
            await index.redis.delete(claim)
            assert await taker.hold()
        return await index._apply(keys=keys, args=args)

    with pytest.raises(RebuildBusy):
        await maintenance.rebuild(index.redis, ns, api.db, "f", taken_before_the_swap)
    assert await _state(index, "f") == "building/2"
    assert not [n for n in await _board_key_names(index, "f") if ":built:" in n]
    await taker.release()
    assert await index.rebuild(api.db, "f") == len(PLAYERS)
    await _ranked_from_the_index(indexed, "f")
    assert (await _oracle(api.db, "f"))["p00"] == 1


async def test_a_rebuild_racing_plays_stays_exact(
    indexed: Indexed,
    projecting: Callable[..., Projecting],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The projector runs with its upgrader while plays keep coming, on a board of the first
    format rebuilt in chunks: plays during the rebuild (improvements and first entries) are
    queued and replayed after the swap, plays after it applied at once. The index ends equal to
    the table, and every rank equals the brute-force count."""
    caplog.set_level(logging.INFO, logger="leaderboard.rankindex")
    api, ns = indexed.api, indexed.index.namespace
    players = [f"r{i:02d}" for i in range(24)]
    await _players(indexed, players)
    await _board_with_entries(indexed, "race", players[:16])
    await _as_first_format(indexed.index, api.db, "race")
    monkeypatch.setattr(maintenance, "_CHUNK", 4)
    pending = PENDING.format(ns=ns, board="race")
    write_rows = maintenance.write_rows
    chunks = 0

    async def while_plays_come(*args: Any) -> None:
        nonlocal chunks
        await write_rows(*args)
        chunks += 1
        if chunks == 1:
            # The rebuild goes on only once the running projector has queued plays for it.
            async def queued() -> bool:
                return int(await indexed.index.redis.llen(pending)) >= 4

            await _eventually(queued, "plays queued during the rebuild")

    monkeypatch.setattr(maintenance, "write_rows", while_plays_come)
    one = projecting()
    stop, playing = asyncio.Event(), asyncio.Event()
    rng = random.Random(11)
    plays = 0

    async def play() -> None:
        nonlocal plays
        while not playing.is_set():
            player = rng.choice(players)
            assert (await api.submit(player, "race", rng.randrange(1_000)))["errors"] == []
            plays += 1

    running = asyncio.create_task(one.projector.run(stop, interval=0.02))
    player_task = asyncio.create_task(play())
    try:

        async def rebuilt_and_played_on() -> bool:
            return one.upgrader.rebuilt == 1 and plays >= 40

        await _eventually(rebuilt_and_played_on, "the board rebuilt, plays after it")
    finally:
        playing.set()
        await player_task
        stop.set()
        await running
    await indexed.projector.drain()
    assert chunks > 1
    assert _rebuilt_lines(caplog) == ["race"]
    assert await indexed.index.redis.llen(pending) == 0
    assert await _state(indexed.index, "race") == READY
    await _ranked_from_the_index(indexed, "race")


async def test_of_two_projectors_the_lease_holder_upgrades_each_board_once(
    indexed: Indexed, projecting: Callable[..., Projecting], caplog: pytest.LogCaptureFixture
) -> None:
    """Two processes run a projector with its upgrader: the one holding the lease rebuilds
    every board, each once; the other rebuilds none. (Their lease outlasts any pause of a
    loaded machine: a takeover would have the other go on, still each board once.)"""
    caplog.set_level(logging.INFO, logger="leaderboard.rankindex")
    api = indexed.api
    await _players(indexed)
    boards = ["two-1", "two-2", "two-3"]
    for board in boards:
        await _board_with_entries(indexed, board, PLAYERS)
        await _as_first_format(indexed.index, api.db, board)
    fleet = [projecting(lease_ms=60_000), projecting(lease_ms=60_000)]
    stops = [asyncio.Event(), asyncio.Event()]
    tasks = [asyncio.create_task(p.projector.run(s)) for p, s in zip(fleet, stops, strict=True)]
    try:

        async def all_rebuilt() -> bool:
            return sum(p.upgrader.rebuilt for p in fleet) >= len(boards)

        await _eventually(all_rebuilt, "every board rebuilt")
    finally:
        for stop in stops:
            stop.set()
        await asyncio.gather(*tasks)
    assert sorted(p.upgrader.rebuilt for p in fleet) == [0, len(boards)]
    assert sorted(_rebuilt_lines(caplog)) == boards
    for board in boards:
        await _ranked_from_the_index(indexed, board)


def _cli_env(redis_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LEADERBOARD_"))}
    env.update(
        LEADERBOARD_CACHE_DIR=str(default_cache_dir()),
        LEADERBOARD_REDIS_URL=redis_url,
        AWS_ACCESS_KEY_ID="local",
        AWS_SECRET_ACCESS_KEY="local",
        AWS_REGION="us-east-1",
    )
    return env


async def _leaderboard(settings: Settings, redis_url: str, *args: str) -> tuple[int, str, str]:
    assert settings.endpoint_url is not None
    backend = ["--endpoint-url", settings.endpoint_url, "--table", settings.table]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "leaderboard.cli",
        *args,
        *backend,
        env=_cli_env(redis_url),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), UPGRADE_WAIT)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_rank_index_rebuild_outdated_upgrades_every_board_of_an_earlier_format(
    indexed: Indexed, settings: Settings, redis_url: str
) -> None:
    """Where the projector cannot read the table (the Lambda), one command rebuilds every board
    of the first format, complete or set aside, and leaves stale and current boards alone."""
    api, index = indexed.api, indexed.index
    await _players(indexed)
    for board in ("cli-1", "cli-2", "cli-stale", "cli-current"):
        await _board_with_entries(indexed, board, PLAYERS[:5])
    await _as_first_format(index, api.db, "cli-1")
    await _as_first_format(index, api.db, "cli-2")
    assert (await api.submit("p06", "cli-2", 5))["errors"] == []
    await indexed.projector.drain()
    assert await _state(index, "cli-2") == OUTDATED
    await index.redis.set(STATE.format(ns=index.namespace, board="cli-stale"), STALE)

    code, out, err = await _leaderboard(settings, redis_url, "rank-index", "rebuild", "--outdated")
    assert code == 0, out + err
    lines = sorted(out.splitlines())
    assert lines == [
        "rebuilt the index of cli-1 (first format): 5 entries",
        "rebuilt the index of cli-2 (outdated): 6 entries",
    ], out
    assert await _state(index, "cli-stale") == STALE
    assert await _state(index, "cli-current") == READY
    for board in ("cli-1", "cli-2", "cli-current"):
        await _ranked_from_the_index(indexed, board)

    code, out, err = await _leaderboard(settings, redis_url, "rank-index", "rebuild", "--outdated")
    assert (code, out) == (0, "no board of an earlier format to rebuild\n"), err
    code, out, err = await _leaderboard(settings, redis_url, "rank-index", "verify", "--outdated")
    assert code == 2
    assert "rank-index verify takes --board" in err


async def _applied_by_a_first_format_projector(
    index: RankIndex, db: Db, board_id: str, player: str
) -> None:
    """The player's entry on the board, as the table holds it now, applied as a projector of
    the first format applies a change: with that format's script, keys and text member."""
    board = await get_leaderboard(db, board_id)
    assert board is not None
    entry = next(e for e in await _entries(db, board_id) if e.player_id == player)
    ns = index.namespace
    keys = [t.format(ns=ns, board=board_id) for t in (ZSET, LEGACY_META, STATE, PENDING)]
    member = f"{tie_value(entry.attained_at)}#{player}"
    value = int(rank_value(entry.score, board.score_width, board.sort_order))
    args: list[str | int] = ["put", player, entry.version, member, value, ""]
    assert await index.redis.eval(FIRST_FORMAT_APPLY, len(keys), *keys, *args) == 1


async def _ranked_by_count(indexed: Indexed, board_id: str) -> None:
    """The index does not answer for the board, and every entrant's rank and the board's total
    equal the brute-force count, each from COUNT queries (which read the table)."""
    api, index = indexed.api, indexed.index
    board = await get_leaderboard(api.db, board_id)
    assert board is not None
    entries = await _entries(api.db, board_id)
    assert await index.ranks({board_id: [(e.player_id, None) for e in entries]}) == {}
    assert await index.better_counts(board, entries) is None
    assert await index.listed_before(board, entries[0]) is None
    expected = await _oracle(api.db, board_id)
    for player, rank in expected.items():
        api.reset_calls()
        answer = await api.gql(
            "query($p: ID!, $b: ID!) { player(id: $p) { rank(leaderboardId: $b) { rank total } } }",
            {"p": player, "b": board_id},
        )
        assert answer["player"]["rank"] == {"rank": rank, "total": len(expected)}, player
        assert api.calls.get("Query", 0) >= 1, f"{player}'s rank on {board_id} used the index"


async def _written_by_a_first_format_projector(indexed: Indexed, board: str) -> None:
    """A board of this format, then a play that a projector of the first format applies (it
    holds the lease: the projector of this format never sees the change). The sorted set then
    holds the player's entry twice, in both formats, and the board is still ``ready/2``."""
    api, index = indexed.api, indexed.index
    await _board_with_entries(indexed, board, PLAYERS)
    assert (await api.submit("p00", board, 500))["errors"] == []
    await _applied_by_a_first_format_projector(index, api.db, board, "p00")
    assert await _state(index, board) == READY
    assert await index.redis.zcard(ZSET.format(ns=index.namespace, board=board)) == len(PLAYERS) + 1
    assert await index.redis.exists(LEGACY_META.format(ns=index.namespace, board=board))


def _reasons(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [
        (str(getattr(r, "board", "")), str(getattr(r, "reason", "")))
        for r in caplog.records
        if r.name == "leaderboard.rankindex" and getattr(r, "entries", None) is not None
    ]


async def test_a_board_a_first_format_projector_wrote_to_is_counted_then_rebuilt(
    indexed: Indexed, projecting: Callable[..., Projecting], caplog: pytest.LogCaptureFixture
) -> None:
    """Readers do not use a board of this format that a projector of the first format wrote
    to: its ranks come from COUNT, exact. The upgrader's scan finds it and rebuilds it; its
    ranks then come from the index again, with no DynamoDB call."""
    caplog.set_level(logging.INFO, logger="leaderboard.rankindex")
    api, index = indexed.api, indexed.index
    await _players(indexed)
    await _written_by_a_first_format_projector(indexed, "mixed")
    await _ranked_by_count(indexed, "mixed")

    one = projecting()
    assert await one.lease.hold()
    assert await one.upgrader.step() == 1
    assert _reasons(caplog) == [("mixed", Due.EARLIER_WRITER.value)]
    assert await _state(index, "mixed") == READY
    assert not await index.redis.exists(LEGACY_META.format(ns=index.namespace, board="mixed"))
    assert await one.upgrader.step() == 0, "healed: no longer due"
    await indexed.projector.drain()  # the play's record, which the rebuild read already
    await _ranked_from_the_index(indexed, "mixed")
    assert (await _oracle(api.db, "mixed"))["p00"] == 1


async def test_a_change_meeting_a_board_a_first_format_projector_wrote_to_sets_it_aside(
    indexed: Indexed, projecting: Callable[..., Projecting]
) -> None:
    """The projector's scan has passed when a projector of the first format writes to a board
    of this format (it held the lease a while); the next change the projector of this format
    applies to that board sets it aside (outdated), and the upgrader rebuilds it next."""
    api, index = indexed.api, indexed.index
    await _players(indexed)
    await _board_with_entries(indexed, "other", PLAYERS[:3])
    one = projecting()
    assert await one.lease.hold()
    assert await one.upgrader.step() == 0, "nothing to rebuild yet"
    await _written_by_a_first_format_projector(indexed, "met")
    assert await one.upgrader.step() == 0, "found by a scan only, which was made"
    await _ranked_by_count(indexed, "met")

    assert (await api.submit("p01", "met", 800))["errors"] == []
    await one.projector.drain()
    assert await _state(index, "met") == OUTDATED
    assert not await index.redis.exists(LEGACY_META.format(ns=index.namespace, board="met"))
    await _ranked_by_count(indexed, "met")
    assert await one.upgrader.step() == 1
    assert await one.upgrader.step() == 0
    assert await _state(index, "met") == READY
    await _ranked_from_the_index(indexed, "met")
    await _ranked_from_the_index(indexed, "other")
    assert (await _oracle(api.db, "met"))["p01"] == 1


async def test_rank_index_rebuild_outdated_rebuilds_a_board_a_first_format_projector_wrote_to(
    indexed: Indexed, settings: Settings, redis_url: str
) -> None:
    """``rank-index rebuild --outdated`` finds a board of this format that a projector of the
    first format wrote to, and rebuilds it."""
    await _players(indexed)
    await _written_by_a_first_format_projector(indexed, "cli-mixed")
    await _ranked_by_count(indexed, "cli-mixed")

    code, out, err = await _leaderboard(settings, redis_url, "rank-index", "rebuild", "--outdated")
    assert code == 0, out + err
    assert out.splitlines() == [
        f"rebuilt the index of cli-mixed (written by an earlier version): {len(PLAYERS)} entries"
    ], out
    assert await _state(indexed.index, "cli-mixed") == READY
    await indexed.projector.drain()
    await _ranked_from_the_index(indexed, "cli-mixed")


async def test_a_rebuild_a_first_format_projector_writes_during_is_made_again(
    indexed: Indexed,
) -> None:
    """A projector of the first format applies a play to a board while it is rebuilt (that
    format queues nothing for a rebuild of this one): the swap leaves the board outdated, and
    the rebuild is made again, which reads the play. One that keeps writing during every
    rebuild has the board left outdated, its ranks from COUNT, for a later rebuild."""
    api, index = indexed.api, indexed.index
    await _players(indexed)
    await _board_with_entries(indexed, "during", PLAYERS)
    begun: list[int] = []
    plays = iter([(player, 600 + n) for n, player in enumerate(PLAYERS)])
    writes = [1]

    async def beside_an_old_projector(keys: list[str], args: list[Any]) -> Any:
        if args[0] == "begin":
            begun.append(1)
        if args[0] == "finish" and len(begun) <= writes[0]:
            player, score = next(plays)
            assert (await api.submit(player, "during", score))["errors"] == []
            await _applied_by_a_first_format_projector(index, api.db, "during", player)
        return await index._apply(keys=keys, args=args)

    ns = index.namespace
    built = await maintenance.rebuild(index.redis, ns, api.db, "during", beside_an_old_projector)
    assert built == len(PLAYERS)
    assert len(begun) == 2, "made again once"
    assert await _state(index, "during") == READY
    await indexed.projector.drain()
    await _ranked_from_the_index(indexed, "during")
    assert (await _oracle(api.db, "during"))["p00"] == 1

    begun.clear()
    writes[0] = maintenance.ATTEMPTS
    with pytest.raises(WrittenByEarlierVersion):
        await maintenance.rebuild(index.redis, ns, api.db, "during", beside_an_old_projector)
    assert len(begun) == maintenance.ATTEMPTS
    assert await _state(index, "during") == OUTDATED
    assert not await index.redis.exists(REBUILD.format(ns=ns, board="during")), "claim released"
    await _ranked_by_count(indexed, "during")
    assert await index.rebuild(api.db, "during") == len(PLAYERS)
    await indexed.projector.drain()
    await _ranked_from_the_index(indexed, "during")
