"""Reading the whole test table back, to check what was written (tests only)."""

from __future__ import annotations

from typing import Any

from dynamo.db import Db
from dynamo.items import deserialize


async def scan_items(db: Db) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": db.table}
    while True:
        page = await db.client.scan(**kwargs)
        items.extend(deserialize(raw) for raw in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
