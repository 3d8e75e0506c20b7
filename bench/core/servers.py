"""Fresh embedded servers for each board size of a benchmark: an in-memory DynamoDB Local and,
where the benchmark needs one, a redis-server, both stopped before the next size starts (in one
long-lived DynamoDB Local, writes slow down as tables and stream records pile up); and the
version a redis-server reports; dropping a table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError
from redis import Redis

from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from leaderboard.embedded_redis import EmbeddedRedis

__all__ = ["drop_table", "dynamodb_and_redis_per_size", "dynamodb_per_size", "redis_version"]


def dynamodb_per_size(
    sizes: Sequence[int], cache_dir: Path
) -> Iterator[tuple[int, EmbeddedDynamoDB]]:
    """Each size in turn with a DynamoDB Local of its own, answering when the size is
    yielded and stopped when the next one is asked for."""
    for size in sizes:
        with EmbeddedDynamoDB(cache_dir) as local:
            yield size, local


def dynamodb_and_redis_per_size(
    sizes: Sequence[int], cache_dir: Path
) -> Iterator[tuple[int, EmbeddedDynamoDB, EmbeddedRedis]]:
    """Each size in turn with a DynamoDB Local and a redis-server of its own."""
    for size in sizes:
        with EmbeddedDynamoDB(cache_dir) as local, EmbeddedRedis() as redis:
            yield size, local, redis


async def drop_table(client: Any, table: str) -> None:
    """Delete ``table``. Dropping a big table can take DynamoDB Local longer than the client
    waits for an answer; the client then sends the request again, which finds the table gone:
    gone is what was asked."""
    try:
        await client.delete_table(TableName=table)
    except ClientError as error:
        if error.response["Error"]["Code"] != "ResourceNotFoundException":
            raise


def redis_version(url: str) -> str:
    """The version the redis-server at ``url`` reports (``unknown`` when it does not say)."""
    with Redis.from_url(url) as client:
        info: Any = client.info("server")
    return str(info.get("redis_version", "unknown"))
