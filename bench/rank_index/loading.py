"""Loading a board for the rank index benchmark: either every entry written into the table
(BatchWriteItem) and the index rebuilt from it, or the index loaded directly into Redis for
every entry with only the board item and the probes' items in the table."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.core.items import bulk_items
from bench.core.loading import batch_write, load_with_batch_writes
from bench.core.measure import BenchError
from bench.core.rank_sync import clock_ms
from bench.core.report import log
from bench.core.workload import GAMES, new_board
from bench.rank_index.results import BoardData
from bench.rank_index.stack import Stack
from dynamo.ids import new_session_id
from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, create_leaderboard
from dynamo.plays import Play
from dynamo.scores import rank_value, tie_value
from rankindex.keys import READY, board_keys
from rankindex.players import entry_commands, layout_for

__all__ = [
    "REDIS_CHUNK",
    "TIE_SPREAD_MS",
    "Loaded",
    "load_direct",
    "load_whole",
]

REDIS_CHUNK = 10_000
"""Entries per pipeline when the index is loaded directly into Redis."""
TIE_SPREAD_MS = 90 * 24 * 3600 * 1000
"""Plays of a directly loaded board are spread over the 90 days before the run."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _play(player_id: str, board_id: str, score: int, rng: random.Random) -> Play:
    return Play(
        player_id=player_id,
        game_id=rng.choice(GAMES),
        score=score,
        leaderboard_ids=(board_id,),
        duration_sec=rng.randint(30, 900),
    )


def _player_id(n: int) -> str:
    return f"player-{n:07d}"


@dataclass(frozen=True)
class Loaded:
    board: BoardData
    load_method: str
    load_seconds: float
    index_method: str
    index_seconds: float
    table_items: int


async def load_whole(stack: Stack, entries: int, rng: random.Random) -> Loaded:
    """Every entry in the table (BatchWriteItem), then RankIndex.rebuild."""
    board = new_board()
    top = max(1, entries // 10)
    plays = [
        _play(_player_id(n), board.leaderboard_id, rng.randint(0, top), rng)
        for n in range(1, entries + 1)
    ]
    started = time.perf_counter()
    await load_with_batch_writes(stack.db, board, plays)
    load_seconds = time.perf_counter() - started
    log(f"[{entries:,}] table loaded in {load_seconds:.1f} s; rebuilding the index ...")
    started = time.perf_counter()
    built = await stack.index.rebuild(stack.db, board.leaderboard_id)
    index_seconds = time.perf_counter() - started
    if built != entries:
        raise BenchError(f"the rebuild indexed {built} entries, not {entries}")
    scores = {p.player_id: p.score for p in plays}
    data = BoardData(
        item=board.model_copy(update={"entry_count": entries}),
        entries=entries,
        probes=list(scores),
        scores=scores,
        sorted_scores=sorted(scores.values()),
    )
    return Loaded(
        data,
        "BatchWriteItem (every entry)",
        load_seconds,
        "RankIndex.rebuild",
        index_seconds,
        1 + 5 * entries,
    )


async def load_direct(stack: Stack, entries: int, probes: int, rng: random.Random) -> Loaded:
    """The index loaded directly into Redis for every entry, in its format (the sorted set and
    the player buckets, laid out as a rebuild lays them out), in pipelines of
    :data:`REDIS_CHUNK`; the board item and the probes' items in the table, consistent with
    it; then the board's state set to ready."""
    board = new_board()
    width, order = board.score_width, board.sort_order
    top = max(1, entries // 10)
    now_ms = clock_ms()
    scores = [rng.randint(0, top) for _ in range(entries)]
    chosen = sorted(rng.sample(range(entries), min(probes, entries)))
    probe_set = set(chosen)
    attained: dict[int, datetime] = {}
    zset, state, layout_key, _ = board_keys(stack.table, board.leaderboard_id)
    layout = layout_for(entries, gen=1)

    started = time.perf_counter()
    for start in range(0, entries, REDIS_CHUNK):
        rows = []
        for i in range(start, min(entries, start + REDIS_CHUNK)):
            at = _EPOCH + timedelta(milliseconds=now_ms - rng.randrange(TIE_SPREAD_MS))
            if i in probe_set:
                attained[i] = at
            value = int(rank_value(scores[i], width, order))
            rows.append((_player_id(i + 1), tie_value(at), value, 1))
        members, buckets = entry_commands(stack.table, board.leaderboard_id, layout, rows)
        async with stack.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(zset, members)
            for key, records in buckets.items():
                pipe.hset(key, mapping=records)  # type: ignore[arg-type]
            await pipe.execute()
        if start and start % (REDIS_CHUNK * 100) == 0:
            log(f"[{entries:,}] {start:,} entries in Redis")
    await stack.redis.hset(
        layout_key,
        mapping={"gen": layout.gen, "level": layout.level, "split": 0, "players": entries},
    )
    index_seconds = time.perf_counter() - started
    log(f"[{entries:,}] index loaded into Redis in {index_seconds:.1f} s; writing the table ...")

    started = time.perf_counter()
    await create_leaderboard(stack.db, board)
    items: list[dict[str, Any]] = []
    for i in chosen:
        play = _play(_player_id(i + 1), board.leaderboard_id, scores[i], rng)
        items.extend(bulk_items(board, play, attained[i], new_session_id()))
    await batch_write(stack.db, items)
    await stack.db.client.update_item(
        TableName=stack.db.table,
        Key=serialize(LEADERBOARD.key_attributes(leaderboard_id=board.leaderboard_id)),
        UpdateExpression="SET entryCount = :count",
        ConditionExpression="attribute_exists(pk)",
        ExpressionAttributeValues=serialize({":count": entries}),
    )
    load_seconds = time.perf_counter() - started
    await stack.redis.set(state, READY)

    probe_scores = {_player_id(i + 1): scores[i] for i in chosen}
    data = BoardData(
        item=board.model_copy(update={"entry_count": entries}),
        entries=entries,
        probes=list(probe_scores),
        scores=probe_scores,
        sorted_scores=sorted(scores),
    )
    return Loaded(
        data,
        f"board item + {len(chosen):,} probes' items (BatchWriteItem)",
        load_seconds,
        "loaded directly into Redis",
        index_seconds,
        1 + len(items),
    )
