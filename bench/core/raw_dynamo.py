"""Thin aioboto3 helpers for the raw counterparts: GetItem, BatchGetItem and Query on the
benchmark table, and a board and its count read as the service reads them, with low-level
(typed-attribute) items in and out."""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Iterator, Sequence
from typing import Any

from dynamo.db import Db
from dynamo.items import serialize
from dynamo.leaderboards import (
    COUNT_SHARDS,
    ENTRY_COUNT_SHARD,
    LEADERBOARD,
    PARTITIONED_ENTRY_COUNT_SHARD,
    LeaderboardItem,
    count_partitions,
)
from dynamo.reads import BATCH_GET_LIMIT
from dynamo.scores import SCORE, score_partitions
from dynamo.table import Key

__all__ = [
    "items_of",
    "merged_items",
    "raw_batch_get",
    "raw_board",
    "raw_count_shards",
    "raw_get",
    "raw_key",
    "raw_query",
    "raw_top_pages",
]


def raw_key(key: Key) -> dict[str, Any]:
    """A ``(pk, sk)`` pair as a low-level DynamoDB key."""
    return {"pk": {"S": key[0]}, "sk": {"S": key[1]}}


async def raw_get(db: Db, key: Key, *, consistent: bool = False) -> dict[str, Any] | None:
    """GetItem of one key; ``None`` when there is no such item."""
    response = await db.client.get_item(
        TableName=db.table, Key=raw_key(key), ConsistentRead=consistent
    )
    item: dict[str, Any] | None = response.get("Item")
    return item


async def raw_batch_get(db: Db, keys: Sequence[Key], *, consistent: bool = False) -> list[Any]:
    """GetItem for one distinct key, BatchGetItem (UnprocessedKeys followed) for several."""
    unique = list(dict.fromkeys(keys))
    if len(unique) == 1:
        item = await raw_get(db, unique[0], consistent=consistent)
        return [item] if item is not None else []
    found: list[Any] = []
    for start in range(0, len(unique), BATCH_GET_LIMIT):
        chunk = unique[start : start + BATCH_GET_LIMIT]
        request: Any = {
            db.table: {"Keys": [raw_key(k) for k in chunk], "ConsistentRead": consistent}
        }
        while request:
            response = await db.client.batch_get_item(RequestItems=request)
            found.extend(response.get("Responses", {}).get(db.table, []))
            request = response.get("UnprocessedKeys") or {}
    return found


async def raw_query(db: Db, **kwargs: Any) -> Any:
    """One Query page on the benchmark table."""
    return await db.client.query(TableName=db.table, **kwargs)


def items_of(response: Any) -> list[Any]:
    """The items of a Query response."""
    items: list[Any] = response.get("Items", [])
    return items


async def raw_board(db: Db, board_id: str, *, consistent: bool = False) -> dict[str, Any] | None:
    """AP9 as the service reads it: one Query of the board's item and the count shards under
    its own key (the sort keys from the shards' to the item's: a board of one partition's
    shards, none on a write-sharded board); the board's item, ``None`` when it has none."""
    response = await raw_query(
        db,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :shards AND :board",
        ExpressionAttributeValues=serialize(
            {
                ":pk": LEADERBOARD.pk.fill(leaderboard_id=board_id),
                ":shards": ENTRY_COUNT_SHARD.sk.prefix,
                ":board": LEADERBOARD.sk.fill(),
            }
        ),
        ConsistentRead=consistent,
        Limit=COUNT_SHARDS + 1,
    )
    board = LEADERBOARD.key(leaderboard_id=board_id)
    return next((i for i in items_of(response) if (i["pk"]["S"], i["sk"]["S"]) == board), None)


async def raw_count_shards(db: Db, board: LeaderboardItem) -> list[Any]:
    """A write-sharded board's count as the service reads it where a request asks for it: one
    Query of each partition key's count shards, all at once (none for a board of one
    partition, whose count comes with :func:`raw_board`); the answers."""
    return list(
        await asyncio.gather(
            *(
                raw_query(
                    db,
                    KeyConditionExpression="pk = :pk AND begins_with(sk, :shards)",
                    ExpressionAttributeValues=serialize(
                        {":pk": pk, ":shards": PARTITIONED_ENTRY_COUNT_SHARD.sk.prefix}
                    ),
                    Limit=COUNT_SHARDS + 1,
                )
                for pk in count_partitions(board)
            )
        )
    )


async def raw_top_pages(db: Db, board: LeaderboardItem, limit: int) -> list[Any]:
    """The first ``limit`` Score items of each of the board's partitions, best first, all at
    once: one Query response a partition."""
    return list(
        await asyncio.gather(
            *(
                raw_query(
                    db,
                    KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                    ExpressionAttributeValues=serialize({":pk": pk, ":prefix": SCORE.sk.prefix}),
                    ScanIndexForward=False,
                    Limit=limit,
                )
                for pk in score_partitions(board)
            )
        )
    )


def merged_items(parts: Sequence[list[Any]], *, descending: bool) -> Iterator[Any]:
    """Items of Query pages, each in the order of its sort keys, merged in that order (the
    board's order across its partitions; one partition's page as it is)."""
    if len(parts) == 1:
        return iter(parts[0])
    return heapq.merge(*parts, key=lambda item: item["sk"]["S"], reverse=descending)
