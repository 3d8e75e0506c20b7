"""AWS Lambda handler: the table's stream (NEW_AND_OLD_IMAGES) to the rank index and the
change feed.

Deploy with an event source mapping on the table's stream, with ReportBatchItemFailures on;
set LEADERBOARD_REDIS_URL (an ElastiCache or any Redis 7 endpoint; required) and
LEADERBOARD_TABLE (the index's namespace: the service's table name; default
``leaderboard``). Lambda delivers each shard's records in order; the projection is
idempotent, so retried batches and replays change nothing in the index (they repeat notices,
which readers merge).

A batch is applied in one round trip to Redis. When Redis fails (refuses, or does not
answer within the timeouts below), the answer names the batch's first record as the first
failure, so Lambda retries the batch from there (records of the batch that did reach the
index are applied again, changing nothing) and never moves past a record that was not
applied.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from rankindex.index import RankIndex
from rankindex.notices import notices
from rankindex.projection import project_all

__all__ = [
    "COMMAND_TIMEOUT",
    "CONNECT_TIMEOUT",
    "DEFAULT_TABLE",
    "SettingsError",
    "handle_batch",
    "handler",
]

DEFAULT_TABLE = "leaderboard"
CONNECT_TIMEOUT = 5.0
"""Seconds to connect to Redis before the batch is reported failed."""
COMMAND_TIMEOUT = 30.0
"""Seconds Redis may take to answer one round trip (a batch's is the longest)."""
log = logging.getLogger("leaderboard")


class SettingsError(RuntimeError):
    """The function's environment lacks a required setting."""


async def handle_batch(event: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one stream batch; the answer lists the records Lambda must deliver again."""
    redis_url = os.environ.get("LEADERBOARD_REDIS_URL", "")
    if not redis_url:
        raise SettingsError("LEADERBOARD_REDIS_URL is not set: set it to the rank index's Redis")
    namespace = os.environ.get("LEADERBOARD_TABLE") or DEFAULT_TABLE
    records: list[dict[str, Any]] = list(event.get("Records", []))
    redis = Redis.from_url(
        redis_url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=COMMAND_TIMEOUT
    )
    try:
        index = RankIndex(redis, namespace)
        await index.apply(project_all(records), notices(records))
        await index.caught_up()
    except RedisError as exc:
        log.error("rank index batch of %d records not applied: %s", len(records), exc)
        return {"batchItemFailures": _from_first(records)}
    finally:
        await redis.aclose()
    return {"batchItemFailures": []}


def _from_first(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The batch's first record as the failure Lambda resumes from (none in an empty batch)."""
    return [{"itemIdentifier": records[0]["dynamodb"]["SequenceNumber"]}] if records else []


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The Lambda entry point (``rankindex.lambda_handler.handler``)."""
    return asyncio.run(handle_batch(event))
