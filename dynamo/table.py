"""The single table: its definition, item (de)serialisation, batched reads and paged queries."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, field_validator
from pydantic.alias_generators import to_camel

from dynamo.cursors import CursorCodec, CursorShape
from dynamo.locks import KeyedLocks

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient
    from types_aiobotocore_dynamodb.type_defs import AttributeValueTypeDef

__all__ = [
    "BATCH_GET_LIMIT",
    "GSI1",
    "GSI2",
    "TTL_ATTRIBUTE",
    "Db",
    "ImmutableItems",
    "Item",
    "Key",
    "Page",
    "batch_get",
    "batch_get_immutable",
    "create_table",
    "get_items",
    "now",
    "query_items",
    "query_page",
    "range_page",
    "serialize",
    "table_definition",
]

GSI1 = "GSI1"
GSI2 = "GSI2"
BATCH_GET_LIMIT = 100
STREAM: Any = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
"""The table's stream, read by the rank index (rankindex/)."""
TTL_ATTRIBUTE = "ttl"
"""The attribute holding an item's expiry (epoch seconds), DynamoDB's time to live."""
_UNPROCESSED_RETRIES = 8

Key = tuple[str, str]
"""A primary key: (pk, sk)."""

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def now() -> datetime:
    """The current time in UTC at millisecond precision, the precision items are stored with."""
    t = datetime.now(UTC)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


class Item(BaseModel):
    """Base of every item model: camelCase attributes as stored, immutable once read."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore"
    )

    @field_validator("*", mode="after")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        """Every instant is kept in UTC; one without an offset is taken to be UTC."""
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value

    def attributes(self) -> dict[str, Any]:
        """The plain (non-key) attributes as stored in DynamoDB, None-valued ones left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


M = TypeVar("M", bound=Item)


class ImmutableItems:
    """Raw items that never change once written (family definitions), kept per process."""

    def __init__(self, max_items: int = 4096) -> None:
        self._items: dict[Key, Any] = {}
        self._max = max_items

    def get(self, key: Key) -> Any | None:
        return self._items.get(key)

    def put(self, key: Key, raw: Any) -> None:
        if len(self._items) < self._max:
            self._items[key] = raw


@dataclass(frozen=True)
class Db:
    """What an access-pattern function needs: the client, the table name, the cursor codec, and
    the process's cache of immutable items and per-player queues."""

    client: DynamoDBClient
    table: str
    cursors: CursorCodec
    immutable: ImmutableItems = field(default_factory=ImmutableItems)
    players: KeyedLocks = field(default_factory=KeyedLocks)
    """Queues the plays of each player within this process."""


@dataclass(frozen=True)
class Page(Generic[M]):
    """One page of a query: the items, one opaque cursor per item, and whether more follow."""

    items: list[M]
    cursors: list[str]
    has_next: bool
    resume_after: str | None = None
    """Where the next page begins, when items read for this page were left out of it."""

    @property
    def end_cursor(self) -> str | None:
        if self.resume_after is not None:
            return self.resume_after
        return self.cursors[-1] if self.cursors else None

    def keeping(self, keep: Sequence[bool]) -> Page[M]:
        """The page with only the items whose ``keep`` is true; the next page still begins
        after the last item read."""
        if all(keep):
            return self
        kept = [(i, c) for i, c, k in zip(self.items, self.cursors, keep, strict=True) if k]
        return Page(
            [i for i, _ in kept], [c for _, c in kept], self.has_next, resume_after=self.end_cursor
        )


def stamp(at: datetime) -> str:
    """An instant as items store it: ISO 8601 in UTC, with ``Z`` (as an Item's datetime
    fields are written)."""
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def serialize(values: Mapping[str, Any]) -> dict[str, AttributeValueTypeDef]:
    """Python values to DynamoDB attribute values (ints stay exact)."""
    return {k: _serializer.serialize(v) for k, v in values.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _number(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:
        number = Decimal(text)
        return int(number) if number == number.to_integral_value() else number


def _value(value: Mapping[str, Any]) -> Any:
    """One attribute value; the types items hold are read directly, any other through boto3."""
    ((tag, raw),) = value.items()
    if tag == "S" or tag == "BOOL":
        return raw
    if tag == "N":
        return _number(raw)
    if tag == "M":
        return {k: _value(v) for k, v in raw.items()}
    if tag == "L":
        return [_value(v) for v in raw]
    if tag == "NULL":
        return None
    return _plain(_deserializer.deserialize(value))


def deserialize(item: Mapping[str, Any]) -> dict[str, Any]:
    """DynamoDB attribute values to Python values; integral numbers come back as int."""
    return {k: _value(v) for k, v in item.items()}


def parse(model: type[M], item: Mapping[str, Any]) -> M:
    """Build an item model from a raw DynamoDB item."""
    return model.model_validate(deserialize(item))


def key(pk: str, sk: str) -> dict[str, AttributeValueTypeDef]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


async def batch_get(db: Db, keys: Sequence[Key], *, consistent: bool = False) -> dict[Key, Any]:
    """Fetch items by primary key: GetItem for one key, BatchGetItem in chunks of 100 otherwise.

    Duplicate keys are fetched once; ``UnprocessedKeys`` are retried with backoff. Returns the
    raw items found, keyed by (pk, sk); missing keys are absent.
    """
    unique = list(dict.fromkeys(keys))
    if not unique:
        return {}
    if len(unique) == 1:
        pk, sk = unique[0]
        got = await db.client.get_item(
            TableName=db.table, Key=key(pk, sk), ConsistentRead=consistent
        )
        return {unique[0]: got["Item"]} if "Item" in got else {}
    chunks = [unique[i : i + BATCH_GET_LIMIT] for i in range(0, len(unique), BATCH_GET_LIMIT)]
    found: dict[Key, Any] = {}
    for part in await asyncio.gather(*(_batch_get_chunk(db, c, consistent) for c in chunks)):
        found.update(part)
    return found


async def get_items(
    db: Db,
    model: type[M],
    keys: Sequence[Key],
    *,
    immutable: bool = False,
    consistent: bool = False,
) -> list[M | None]:
    """The items of ``keys`` as ``model``, one result per key, in order, None where missing
    (through :func:`batch_get`, or :func:`batch_get_immutable` for items that never change);
    ``consistent``: read with ConsistentRead."""
    found = await (
        batch_get_immutable(db, keys) if immutable else batch_get(db, keys, consistent=consistent)
    )
    return [parse(model, found[k]) if k in found else None for k in keys]


async def batch_get_immutable(db: Db, keys: Sequence[Key]) -> dict[Key, Any]:
    """batch_get for items that never change: each is read from the table once per process."""
    found = {k: raw for k in keys if (raw := db.immutable.get(k)) is not None}
    fetched = await batch_get(db, [k for k in keys if k not in found])
    for k, raw in fetched.items():
        db.immutable.put(k, raw)
    return found | fetched


async def _batch_get_chunk(db: Db, keys: Sequence[Key], consistent: bool) -> dict[Key, Any]:
    found: dict[Key, Any] = {}
    request: Any = {
        db.table: {"Keys": [key(pk, sk) for pk, sk in keys], "ConsistentRead": consistent}
    }
    for attempt in range(_UNPROCESSED_RETRIES + 1):
        response = await db.client.batch_get_item(RequestItems=request)
        for raw in response.get("Responses", {}).get(db.table, []):
            found[(raw["pk"]["S"], raw["sk"]["S"])] = raw
        request = response.get("UnprocessedKeys") or {}
        if not request:
            return found
        if attempt < _UNPROCESSED_RETRIES:
            await asyncio.sleep(random.uniform(0, 0.05 * 2**attempt))
    raise ClientError(
        {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "unprocessed"}},
        "BatchGetItem",
    )


async def query_items(
    db: Db,
    *,
    key_condition: str,
    values: Mapping[str, Any],
    limit: int,
    index: str | None = None,
    descending: bool = True,
    start: Mapping[str, str] | None = None,
    filter_expression: str | None = None,
    consistent: bool = False,
) -> list[dict[str, Any]]:
    """Up to ``limit`` raw items of a key-condition Query, continuing past a 1 MB page (and,
    with ``filter_expression``, past pages whose items it filtered out); ``consistent``: with
    ConsistentRead (not on a global secondary index)."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {
        "TableName": db.table,
        "KeyConditionExpression": key_condition,
        "ExpressionAttributeValues": serialize(values),
        "ScanIndexForward": not descending,
    }
    if index is not None:
        kwargs["IndexName"] = index
    if start is not None:
        kwargs["ExclusiveStartKey"] = {k: {"S": v} for k, v in start.items()}
    if filter_expression is not None:
        kwargs["FilterExpression"] = filter_expression
    if consistent:
        kwargs["ConsistentRead"] = True
    while len(items) < limit:
        kwargs["Limit"] = limit - len(items)
        response = await db.client.query(**kwargs)
        items.extend(response.get("Items", []))
        last = response.get("LastEvaluatedKey")
        if not last:
            break
        kwargs["ExclusiveStartKey"] = last
    return items


async def range_page(
    db: Db,
    model: type[M],
    pk: str,
    prefix: str,
    first: int,
    after: str | None,
    *,
    consistent: bool = False,
) -> Page[M]:
    """One page of the items of partition ``pk`` whose sort key begins with ``prefix``, read
    descending (newest or best first); ``consistent``: with ConsistentRead."""
    return await query_page(
        db,
        model,
        key_condition="pk = :pk AND begins_with(sk, :prefix)",
        values={":pk": pk, ":prefix": prefix},
        cursor_shape=CursorShape(exact={"pk": pk}, prefixes={"sk": prefix}),
        first=first,
        after=after,
        consistent=consistent,
    )


async def query_page(
    db: Db,
    model: type[M],
    *,
    key_condition: str,
    values: Mapping[str, Any],
    cursor_shape: CursorShape,
    first: int,
    after: str | None,
    index: str | None = None,
    descending: bool = True,
    filter_expression: str | None = None,
    consistent: bool = False,
) -> Page[M]:
    """One page of a key-condition Query, reading one item more than asked to know if more follow.

    ``cursor_shape`` names every key attribute of the queried index with the value (partition)
    or prefix (sort) it must have; a cursor of any other shape is rejected.
    """
    start = db.cursors.decode(after, cursor_shape) if after is not None else None
    raw_items = await query_items(
        db,
        key_condition=key_condition,
        values=values,
        limit=first + 1,
        index=index,
        descending=descending,
        start=start,
        filter_expression=filter_expression,
        consistent=consistent,
    )
    shown = raw_items[:first]
    return Page(
        items=[parse(model, raw) for raw in shown],
        cursors=[
            db.cursors.encode({k: raw[k]["S"] for k in cursor_shape.attributes}) for raw in shown
        ],
        has_next=len(raw_items) > first,
    )


async def count(
    db: Db, *, key_condition: str, values: Mapping[str, Any], index: str | None = None
) -> int:
    """Count the items matching a key condition, following LastEvaluatedKey to the end."""
    kwargs: dict[str, Any] = {
        "TableName": db.table,
        "KeyConditionExpression": key_condition,
        "ExpressionAttributeValues": serialize(values),
        "Select": "COUNT",
    }
    if index is not None:
        kwargs["IndexName"] = index
    total = 0
    while True:
        response = await db.client.query(**kwargs)
        total += response["Count"]
        last = response.get("LastEvaluatedKey")
        if not last:
            return total
        kwargs["ExclusiveStartKey"] = last


def table_definition(name: str) -> dict[str, Any]:
    """The CreateTable request of the table ``name``: string keys pk/sk, the GSIs GSI1 and GSI2
    (keys gsi1pk/gsi1sk and gsi2pk/gsi2sk, every attribute projected), on-demand billing and
    the stream. deploy/template.yaml declares the same table; its test compares the two."""
    attributes: Iterable[str] = ("pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk")
    return {
        "TableName": name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in attributes],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": index,
                "KeySchema": [
                    {"AttributeName": f"{index.lower()}pk", "KeyType": "HASH"},
                    {"AttributeName": f"{index.lower()}sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index in (GSI1, GSI2)
        ],
        "StreamSpecification": STREAM,
    }


async def create_table(client: DynamoDBClient, name: str) -> bool:
    """Create the table (``table_definition``) with its TTL if it does not exist (and turn on
    the stream of an older table without one). True when newly created."""
    created = True
    try:
        await client.create_table(**table_definition(name))
    except ClientError as error:
        if error.response["Error"]["Code"] != "ResourceInUseException":
            raise
        created = False
    await client.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
    )
    described = await client.describe_table(TableName=name)
    if not described["Table"].get("StreamSpecification", {}).get("StreamEnabled"):
        await client.update_table(TableName=name, StreamSpecification=STREAM)
    ttl = await client.describe_time_to_live(TableName=name)
    if ttl["TimeToLiveDescription"].get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        await client.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
        )
    return created
