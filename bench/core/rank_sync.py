"""The wait until the rank index's stream projector has caught up with the table's stream,
read from the heartbeat it keeps in Redis."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from bench.core.measure import BenchError
from rankindex.keys import HEARTBEAT

__all__ = ["SYNC_TIMEOUT_SECONDS", "clock_ms", "wait_in_sync"]

SYNC_TIMEOUT_SECONDS = 900.0


def clock_ms() -> int:
    """The wall clock in milliseconds since the epoch."""
    return int(time.time() * 1000)


async def wait_in_sync(
    redis: Redis, table: str, within_seconds: float = SYNC_TIMEOUT_SECONDS
) -> float:
    """Wait until the projector has made a complete pass over the stream that started after
    this call (two ``caughtUpAt`` updates); the seconds waited. BenchError past
    ``within_seconds``."""
    started = time.perf_counter()
    heartbeat = HEARTBEAT.format(ns=table)
    seen = clock_ms()
    for _ in range(2):
        while True:
            value = await redis.hget(heartbeat, "caughtUpAt")
            if value is not None and int(value) > seen:
                seen = int(value)
                break
            if time.perf_counter() - started > within_seconds:
                raise BenchError("the projector did not catch up with the stream")
            await asyncio.sleep(0.05)
    return time.perf_counter() - started
