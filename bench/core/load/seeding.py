"""The boards of the mixed workload loaded into a fresh table with BatchWriteItem and, with the
rank index, each board's index rebuilt and the projector caught up; and the set-up a report
states."""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import aioboto3
from redis.asyncio import Redis

from bench.core.loading import load_boards_with_batch_writes
from bench.core.rank_sync import wait_in_sync
from bench.core.report import log
from bench.core.stack import CREDENTIALS, CURSOR_SECRET, LOADER_CONFIG, REGION
from bench.core.workload import LoadedPlayer, new_boards, plays
from dynamo.cursors import CursorCodec
from dynamo.db import Db
from dynamo.table import create_table
from rankindex.index import RankIndex
from rankindex.keys import board_keys

__all__ = ["SYNC_TIMEOUT_SECONDS", "Seeded", "create_table_at", "seed", "setup_of"]

SYNC_TIMEOUT_SECONDS = 300.0


def _client(endpoint_url: str) -> Any:
    """The benchmark's own DynamoDB client (an async context manager)."""
    return aioboto3.Session().client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=REGION,
        config=LOADER_CONFIG,
        aws_access_key_id=CREDENTIALS[0],
        aws_secret_access_key=CREDENTIALS[1],
    )


async def create_table_at(endpoint_url: str, table: str) -> None:
    """Create ``table`` in the DynamoDB at ``endpoint_url``."""
    async with _client(endpoint_url) as client:
        await create_table(client, table)


@dataclass(frozen=True)
class Seeded:
    """The loaded boards: every player as loaded, the entries of each board, and how long
    loading, the index rebuild and the wait for the projector took."""

    players: list[LoadedPlayer]
    board_entries: dict[str, int]
    load_seconds: float
    index_seconds: float
    sync_seconds: float
    items: int


async def seed(
    endpoint_url: str, table: str, entries: int, redis_url: str | None, rng: random.Random
) -> Seeded:
    """Load the boards; with the rank index, rebuild each board's index and wait until the
    projector has caught up, then check that the index holds every entry."""
    boards = new_boards()
    board_plays = plays(entries, rng, extra_boards=True)
    counts = Counter(b for p in board_plays for b in p.leaderboard_ids)
    async with _client(endpoint_url) as client:
        db = Db(client=client, table=table, cursors=CursorCodec(CURSOR_SECRET))
        started = time.perf_counter()
        loaded = await load_boards_with_batch_writes(db, boards, board_plays)
        load_seconds = time.perf_counter() - started
        log(f"[mixed] loaded {entries:,} players in {load_seconds:.1f} s")
        index_seconds = sync_seconds = 0.0
        if redis_url is not None:
            redis = Redis.from_url(redis_url)
            try:
                index = RankIndex(redis, table)
                started = time.perf_counter()
                for board in boards:
                    await index.rebuild(db, board.leaderboard_id)
                index_seconds = time.perf_counter() - started
                sync_seconds = await wait_in_sync(redis, table, SYNC_TIMEOUT_SECONDS)
                for board in boards:
                    zset = board_keys(table, board.leaderboard_id)[0]
                    held = await redis.zcard(zset)
                    if held != counts[board.leaderboard_id]:
                        raise RuntimeError(
                            f"the index of {board.leaderboard_id} holds {held} entries,"
                            f" not {counts[board.leaderboard_id]}"
                        )
            finally:
                await redis.aclose()
            log(
                f"[mixed] index rebuilt in {index_seconds:.1f} s, in sync after"
                f" {sync_seconds:.1f} s"
            )
    items = 3 * entries + 2 * sum(counts.values())
    return Seeded(
        loaded, dict(counts), load_seconds, index_seconds, sync_seconds, items + len(boards)
    )


def setup_of(seeded: Seeded) -> dict[str, Any]:
    """The set-up a report states."""
    return {
        "boards": seeded.board_entries,
        "items": seeded.items,
        "load_seconds": round(seeded.load_seconds, 1),
        "index_seconds": round(seeded.index_seconds, 1),
        "sync_seconds": round(seeded.sync_seconds, 1),
        "load_method": "BatchWriteItem (every entry)",
    }
