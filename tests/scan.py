"""Reading the whole test table back, to check what was written (tests only)."""

from __future__ import annotations

from typing import Any

from dynamo.db import Db
from dynamo.items import deserialize
from dynamo.layout import entity_of
from dynamo.leaderboards import ENTRY_COUNT_SHARD, LEADERBOARD, PARTITIONED_ENTRY_COUNT_SHARD


async def scan_items(db: Db) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": db.table}
    while True:
        page = await db.client.scan(**kwargs)
        items.extend(deserialize(raw) for raw in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def entry_counts(items: list[dict[str, Any]]) -> dict[str, int]:
    """Each board's ``entryCount`` in scanned items: its item's own plus its count shards'
    (under its own key, or under its partitions' on a write-sharded board)."""
    counts = {str(i["leaderboardId"]): int(i["entryCount"]) for i in items if LEADERBOARD.holds(i)}
    shards = (ENTRY_COUNT_SHARD, PARTITIONED_ENTRY_COUNT_SHARD)
    for item in items:
        if entity_of(item) in shards and item["leaderboardId"] in counts:
            counts[str(item["leaderboardId"])] += int(item["entryCount"])
    return counts
