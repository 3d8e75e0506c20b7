"""The rank index during a soak: its projector follows the table's stream (as the Lambda does
on AWS); at the end the stream is drained into it and every board's index is compared with the
table's entries (members, scores)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from bench.core.stack import CREDENTIALS, served_settings
from dynamo.db import Db
from leaderboard.backend import open_stream
from rankindex.index import RankIndex, Verification
from rankindex.projector import Projector

__all__ = ["IndexCheck", "Projection", "projected_index", "verify_index"]

_SHOWN = 20
"""Differences listed per board and kind; all are counted."""


@dataclass
class IndexCheck:
    """Every board's index compared with the table."""

    boards: list[Verification] = field(default_factory=list)
    applied: int = 0
    """Stream records the final drain still had to apply (the served projector's lag)."""

    @property
    def entries(self) -> int:
        return sum(v.entries for v in self.boards)

    @property
    def differences(self) -> list[str]:
        """One line per board whose index differs from its entries in the table."""
        return [
            f"board {v.board}: {len(v.missing)} missing {v.missing[:_SHOWN]},"
            f" {len(v.extra)} extra {v.extra[:_SHOWN]},"
            f" {len(v.wrong_score)} with a wrong score {v.wrong_score[:_SHOWN]}"
            for v in self.boards
            if not v.ok
        ]

    def document(self) -> dict[str, Any]:
        return {
            "boards": len(self.boards),
            "entries": self.entries,
            "applied_at_the_end": self.applied,
            "differences": self.differences,
        }


@dataclass(frozen=True)
class Projection:
    """The index of one table and the projector that keeps it in step with the stream."""

    db: Db
    index: RankIndex
    projector: Projector
    stop: asyncio.Event
    running: asyncio.Task[None]

    async def verify(self, boards: Sequence[str]) -> IndexCheck:
        """Stop the projector, drain the stream into the index (twice: the second finds
        nothing unless something still arrived), then verify each of ``boards`` against the
        table."""
        self.stop.set()
        await self.running
        return await _drain_and_verify(self.db, self.index, self.projector, boards)


async def _drain_and_verify(
    db: Db, index: RankIndex, projector: Projector, boards: Sequence[str]
) -> IndexCheck:
    check = IndexCheck()
    check.applied = await projector.drain()
    check.applied += await projector.drain()
    for board in boards:
        check.boards.append(await index.verify(db, board))
    return check


async def verify_index(
    db: Db, endpoint_url: str, redis_url: str, boards: Sequence[str]
) -> IndexCheck:
    """Drain what the stream of ``db``'s table still holds into the index in the Redis at
    ``redis_url`` (once every other projector has stopped), then verify each of ``boards``
    against the table."""
    redis = Redis.from_url(redis_url)
    try:
        settings = served_settings(endpoint_url, db.table, redis_url=redis_url)
        async with open_stream(settings, CREDENTIALS, db) as stream:
            index = RankIndex(redis, db.table)
            return await _drain_and_verify(db, index, Projector(stream, index), boards)
    finally:
        await redis.aclose()


@asynccontextmanager
async def projected_index(db: Db, endpoint_url: str, redis_url: str) -> AsyncIterator[Projection]:
    """Run the projector of ``db``'s table into the index in the Redis at ``redis_url`` until
    the block is left."""
    redis = Redis.from_url(redis_url)
    stop = asyncio.Event()
    try:
        settings = served_settings(endpoint_url, db.table, redis_url=redis_url)
        async with open_stream(settings, CREDENTIALS, db) as stream:
            index = RankIndex(redis, db.table)
            projector = Projector(stream, index)
            task = asyncio.create_task(projector.run(stop))
            try:
                yield Projection(db, index, projector, stop, task)
            finally:
                stop.set()
                await task
    finally:
        await redis.aclose()
