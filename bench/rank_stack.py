"""The stack the rank index benchmark serves on one table: the index instance of the app (with
Redis and the stream projector) and the COUNT instance (without Redis), each on a loopback TCP
port, with the benchmark's own DynamoDB and Redis clients; and the wait until the projector has
caught up with the table's stream."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

from aiobotocore.config import AioConfig
from aiohttp import web
from redis.asyncio import Redis

from bench.measure import BenchError
from bench.stack import CREDENTIALS, CURSOR_SECRET, REGION
from dynamo.metrics import CallCounter
from dynamo.table import Db, create_table
from leaderboard.app import CALLS, create_app
from leaderboard.backend import open_table
from leaderboard.config import Settings
from rankindex.index import RankIndex
from rankindex.keys import HEARTBEAT

__all__ = [
    "API_KEY",
    "SYNC_TIMEOUT_SECONDS",
    "Stack",
    "clock_ms",
    "rank_stack",
    "wait_in_sync",
]

API_KEY = "bench-rank-index-key"
SYNC_TIMEOUT_SECONDS = 900.0
_LOADER_CONFIG = AioConfig(
    retries={"mode": "standard", "max_attempts": 10},
    connect_timeout=5,
    read_timeout=120,
    max_pool_connections=64,
)
"""The benchmark's own client (loading, rebuild, verify): patient, so that a bulk write that
DynamoDB Local answers slowly is waited for rather than failed."""


@dataclass(frozen=True)
class Stack:
    """Both instances of the app on one table, and the benchmark's own handles on the table
    (its own DynamoDB client) and the index (its own Redis client)."""

    table: str
    index_url: str
    count_url: str
    db: Db
    index_calls: CallCounter
    count_calls: CallCounter
    redis: Redis
    index: RankIndex


async def _create_table(db: Db) -> None:
    await create_table(db.client, db.table)


@asynccontextmanager
async def _serve(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = int(runner.addresses[0][1])
        yield f"http://127.0.0.1:{port}/graphql"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def rank_stack(endpoint_url: str, redis_url: str, table: str) -> AsyncIterator[Stack]:
    """Serve the index instance (which creates ``table``) and the COUNT instance on it."""
    settings = Settings(
        endpoint_url=endpoint_url,
        region=REGION,
        table=table,
        cursor_secret=CURSOR_SECRET,
        api_keys=(API_KEY,),
    )
    with_index = create_app(
        replace(settings, redis_url=redis_url),
        credentials=CREDENTIALS,
        prepare=_create_table,
        project_ranks=True,
    )
    count_only = create_app(settings, credentials=CREDENTIALS)
    redis = Redis.from_url(redis_url)
    try:
        async with (
            _serve(with_index) as index_url,
            _serve(count_only) as count_url,
            open_table(settings, CREDENTIALS, config=_LOADER_CONFIG) as db,
        ):
            yield Stack(
                table=table,
                index_url=index_url,
                count_url=count_url,
                db=db,
                index_calls=with_index[CALLS],
                count_calls=count_only[CALLS],
                redis=redis,
                index=RankIndex(redis, table),
            )
    finally:
        await redis.aclose()


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
