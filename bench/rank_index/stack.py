"""The stack the rank index benchmark serves on one table: the index instance of the app (with
Redis and the stream projector) and the COUNT instance (without Redis), each on a loopback TCP
port, with the benchmark's own DynamoDB and Redis clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

from redis.asyncio import Redis

from bench.core.stack import (
    CREDENTIALS,
    CURSOR_SECRET,
    LOADER_CONFIG,
    REGION,
    create_served_table,
    serve_app,
)
from dynamo.db import Db
from dynamo.metrics import CallCounter
from leaderboard.app import CALLS, create_app
from leaderboard.backend import open_table
from leaderboard.config import Limits, Settings
from rankindex.index import RankIndex

__all__ = ["API_KEY", "UNTHROTTLED", "Stack", "rank_stack"]

API_KEY = "bench-rank-index-key"
"""The key the rank index benchmark's client writes with."""
UNTHROTTLED = replace(Limits(), anonymous_cost_per_second=1e9, anonymous_cost_burst=10**12)
"""The service's limits, less the anonymous caller's allowance of cost points: the benchmark
asks its rank queries anonymously, hundreds a second from one address, to time them, not the
throttle."""


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


@asynccontextmanager
async def rank_stack(endpoint_url: str, redis_url: str, table: str) -> AsyncIterator[Stack]:
    """Serve the index instance (which creates ``table``) and the COUNT instance on it."""
    settings = Settings(
        endpoint_url=endpoint_url,
        region=REGION,
        table=table,
        cursor_secret=CURSOR_SECRET,
        api_keys=(API_KEY,),
        limits=UNTHROTTLED,
    )
    with_index = create_app(
        replace(settings, redis_url=redis_url),
        credentials=CREDENTIALS,
        prepare=create_served_table,
        project_ranks=True,
    )
    count_only = create_app(settings, credentials=CREDENTIALS)
    redis = Redis.from_url(redis_url)
    try:
        async with (
            serve_app(with_index) as index_url,
            serve_app(count_only) as count_url,
            open_table(settings, CREDENTIALS, config=LOADER_CONFIG) as db,
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
