"""The single table: its primary key, its two global secondary indexes, its stream and time
to live, and its definition (the CreateTable request) and creation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = [
    "GSI1",
    "GSI2",
    "STREAM",
    "TTL_ATTRIBUTE",
    "Key",
    "create_table",
    "table_definition",
]

GSI1 = "GSI1"
GSI2 = "GSI2"
STREAM: Any = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
"""The table's stream, read by the rank index (rankindex/)."""
TTL_ATTRIBUTE = "ttl"
"""The attribute holding an item's expiry (epoch seconds), DynamoDB's time to live."""

Key = tuple[str, str]
"""A primary key: (pk, sk)."""


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
