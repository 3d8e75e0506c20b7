"""The local projector: reads the table's stream and keeps the index in step.

On AWS the same projection runs as a Lambda on the stream (rankindex.lambda_handler); here,
against DynamoDB Local, this poller plays that part: ``leaderboard rank-indexer`` runs it,
and ``leaderboard serve`` starts it in embedded mode. Each shard's last applied sequence
number is kept in Redis, so a restarted projector continues where the last one stopped.
With a :class:`~rankindex.lease.Lease`, any number of processes may run a projector of the
same table: only the lease's holder reads and applies, and another takes over when it stops.
With an :class:`~rankindex.upgrade.Upgrader` (a projector that can read the table), the
holder also rebuilds, in a task of its own, the boards an earlier format indexed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from dynamo.streams import TableStream
from rankindex.cancellation import raise_if_cancelled
from rankindex.index import RankIndex
from rankindex.lease import Lease
from rankindex.notices import notices
from rankindex.projection import project_all
from rankindex.upgrade import Upgrader

__all__ = ["Projector"]

log = logging.getLogger("leaderboard.rankindex")


SHARDS_MAX_AGE = 10.0
"""Seconds the projector reuses its list of the stream's shards. A shard's children appear
when it closes, which the projector sees (the shard reads to its end) and lists the shards
again at once; the age bounds how long any other change to the list goes unseen."""


class Projector:
    def __init__(
        self,
        stream: TableStream,
        index: RankIndex,
        lease: Lease | None = None,
        *,
        upgrader: Upgrader | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.index = index
        self.lease = lease
        self.upgrader = upgrader
        self.clock = clock
        self._shards: list[dict[str, Any]] = []
        self._listed_at: float | None = None
        self._finished: set[str] = set()
        """Shards closed and read to their end: nothing more can come from them."""

    async def _open_shards(self) -> list[str]:
        """The shards that may still hold records, parents before children; the list is
        asked for again when it is older than :data:`SHARDS_MAX_AGE` or a shard has closed."""
        now = self.clock()
        if self._listed_at is None or now - self._listed_at > SHARDS_MAX_AGE:
            self._shards = await self.stream.shards()
            self._finished &= {shard["ShardId"] for shard in self._shards}
            self._listed_at = now
        open_shards = [s["ShardId"] for s in self._shards if s["ShardId"] not in self._finished]
        if not open_shards:
            # A new stream has no shard until its first write: list again next round.
            self._listed_at = None
        return open_shards

    async def drain(self) -> int:
        """Apply everything the stream holds now, shard by shard (parents first), with its
        notices; returns how many changes altered the index. With a lease, does nothing
        unless it holds the lease, and stops as soon as it loses it (checked before each
        page)."""
        applied = 0
        if not await self._holding():
            return applied  # asked first: a process without the lease reads nothing
        for shard_id in await self._open_shards():
            after = await self.index.checkpoint(shard_id)
            while True:
                raise_if_cancelled()
                if not await self._holding():
                    return applied
                read = await self.stream.read(shard_id, after)
                if read.records:
                    changes = project_all(read.records)
                    applied += await self.index.apply(changes, notices(read.records))
                    after = read.records[-1]["dynamodb"]["SequenceNumber"]
                    await self.index.set_checkpoint(shard_id, after)
                if read.finished:
                    self._finished.add(shard_id)
                    self._listed_at = None  # its children, if any, are listed next round
                if not read.records or read.finished:
                    break
        await self.index.caught_up()
        return applied

    async def _holding(self) -> bool:
        return self.lease is None or await self.lease.hold()

    async def run(self, stop: asyncio.Event, interval: float = 0.1) -> None:
        """Drain again and again until ``stop`` is set; a failed round is logged and retried.
        The upgrader, if any, runs beside it meanwhile; on the way out it is cancelled (a
        rebuild it had under way is finished by the next), and the lease, if any, given up."""
        upgrading = None if self.upgrader is None else asyncio.create_task(self.upgrader.run(stop))
        try:
            while not stop.is_set():
                raise_if_cancelled()
                try:
                    await self.drain()
                except Exception:
                    log.exception("rank index projection failed; retrying")
                    await asyncio.sleep(1)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), interval)
        finally:
            if upgrading is not None:
                upgrading.cancel()
                await asyncio.wait({upgrading}, timeout=10)
        if self.lease is not None and self.lease.held:
            with contextlib.suppress(RedisError, OSError):
                await self.lease.release()
