"""What a closed board's items take to store, by kind: its Result items (the final
standings) beside the live board's Score items, entry guards and count shards, and the rest of
the table (the players, their e-mail claims and sessions), by a consistent Scan; and the write
units DynamoDB's rules give for writing the Result items once (:mod:`bench.core.sizes`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.core.sizes import index_copies, item_size, stored_bytes, write_units
from dynamo.layout import ENTITIES, entity_of
from dynamo.results import RESULT

__all__ = ["OTHER", "KindStorage", "Storage", "table_storage"]

OTHER = "other"


@dataclass(frozen=True)
class KindStorage:
    """The items of one kind (an entity of the table's layout)."""

    kind: str
    items: int
    bytes: int
    """Their attribute names and values, by DynamoDB's rules."""
    billed_bytes: int
    """What DynamoDB bills for storing them: each item's bytes with 100 bytes of overhead, in
    the table and again in each global secondary index holding it."""


@dataclass(frozen=True)
class Storage:
    kinds: list[KindStorage]
    """Every kind found, in the layout's order."""
    result_write_units: float
    """Write units DynamoDB's rules give for putting every Result item once: its size in 1 KB
    units, in the table and in each index holding it."""


async def table_storage(client: Any, table: str) -> Storage:
    """Scan ``table`` (strongly consistent) and sum its items by kind."""
    count: Counter[str] = Counter()
    data: Counter[str] = Counter()
    billed: Counter[str] = Counter()
    result_units = 0.0
    start: dict[str, Any] | None = None
    while True:
        page = await client.scan(
            TableName=table, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {})
        )
        for item in page["Items"]:
            entity = entity_of({"pk": item["pk"]["S"], "sk": item["sk"]["S"]})
            kind = entity.name if entity is not None else OTHER
            count[kind] += 1
            data[kind] += item_size(item)
            billed[kind] += stored_bytes(item)
            if entity is RESULT:
                result_units += write_units(item_size(item)) * (1 + index_copies(item))
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    order = [e.name for e in ENTITIES] + [OTHER]
    return Storage(
        kinds=[
            KindStorage(kind, count[kind], data[kind], billed[kind])
            for kind in order
            if count[kind]
        ],
        result_write_units=result_units,
    )
