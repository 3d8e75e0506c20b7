"""AWS Lambda handler: the table's stream (NEW_AND_OLD_IMAGES) to the rank index and the
change feed.

Deploy with an event source mapping on the table's stream; set LEADERBOARD_REDIS_URL (an
ElastiCache or any Redis 7 endpoint) and LEADERBOARD_TABLE (the index's namespace). Lambda
delivers each shard's records in order; the projection is idempotent, so retried batches
and replays change nothing in the index (they repeat notices, which readers merge). Report
batch failures so a failed batch is retried alone.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from redis.asyncio import Redis

from rankindex.index import RankIndex
from rankindex.notices import notices
from rankindex.projection import project_all

__all__ = ["handle_batch", "handler"]


async def handle_batch(event: dict[str, Any]) -> dict[str, Any]:
    redis = Redis.from_url(os.environ["LEADERBOARD_REDIS_URL"])
    try:
        index = RankIndex(redis, os.environ.get("LEADERBOARD_TABLE", "leaderboard"))
        records = event.get("Records", [])
        await index.apply(project_all(records), notices(records))
        await index.caught_up()
    finally:
        await redis.aclose()
    return {"batchItemFailures": []}


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return asyncio.run(handle_batch(event))
