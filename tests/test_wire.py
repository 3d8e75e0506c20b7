"""The service's DynamoDB clients read attribute values straight from the wire
(dynamo/wire.py): every answer must equal what botocore's own parser makes of it, for every
type of attribute value, from DynamoDB and from DynamoDB Streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aioboto3
import pytest

from dynamo.streams import TableStream
from dynamo.table import create_table
from dynamo.wire import attribute_value
from leaderboard.backend import LOCAL_CREDENTIALS, open_stream, open_table
from leaderboard.config import Settings

EVERY_TYPE: dict[str, Any] = {
    "pk": {"S": "WIRE#1"},
    "sk": {"S": "ITEM"},
    "text": {"S": "Zoë 🎮"},
    "int": {"N": "42"},
    "big": {"N": "123456789012345678901234567890"},
    "fraction": {"N": "-0.125"},
    "binary": {"B": b"\x00\x01\xffbytes"},
    "texts": {"SS": ["a", "b"]},
    "numbers": {"NS": ["1", "2.5"]},
    "binaries": {"BS": [b"\x00", b"\x01\x02"]},
    "yes": {"BOOL": True},
    "nothing": {"NULL": True},
    "list": {"L": [{"S": "x"}, {"N": "1"}, {"B": b"\x07"}, {"L": [{"BOOL": False}]}]},
    "map": {"M": {"inner": {"M": {"b": {"B": b"\x08"}, "n": {"NULL": True}}}, "s": {"S": ""}}},
}


def _data(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


@asynccontextmanager
async def _stock(settings: Settings, service: str) -> AsyncIterator[Any]:
    """A client with botocore's own parser."""
    async with aioboto3.Session().client(
        service,  # type: ignore[call-overload]
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        aws_access_key_id=LOCAL_CREDENTIALS[0],
        aws_secret_access_key=LOCAL_CREDENTIALS[1],
    ) as client:
        yield client


async def test_every_answer_equals_botocore_s_own_reading(settings: Settings) -> None:
    async with open_table(settings, LOCAL_CREDENTIALS) as db, _stock(settings, "dynamodb") as stock:
        await create_table(db.client, db.table)
        await db.client.put_item(TableName=db.table, Item=EVERY_TYPE)
        key = {"pk": EVERY_TYPE["pk"], "sk": EVERY_TYPE["sk"]}
        calls: list[tuple[str, dict[str, Any]]] = [
            ("get_item", {"TableName": db.table, "Key": key}),
            (
                "query",
                {
                    "TableName": db.table,
                    "KeyConditionExpression": "pk = :pk",
                    "ExpressionAttributeValues": {":pk": EVERY_TYPE["pk"]},
                    "Limit": 1,
                },
            ),
            ("batch_get_item", {"RequestItems": {db.table: {"Keys": [key]}}}),
            ("scan", {"TableName": db.table}),
        ]
        for name, arguments in calls:
            ours = _data(await getattr(db.client, name)(**arguments))
            theirs = _data(await getattr(stock, name)(**arguments))
            assert ours == theirs, name
        got = await db.client.get_item(TableName=db.table, Key=key)
        assert got["Item"] == EVERY_TYPE
        # The records of the stream, images and keys, read both ways.
        async with (
            open_stream(settings, LOCAL_CREDENTIALS, db) as ours_stream,
            _stock(settings, "dynamodbstreams") as streams,
        ):
            theirs_stream = TableStream(db.client, streams, db.table)
            (shard,) = await ours_stream.shards()
            mine = await ours_stream.read(shard["ShardId"], None)
            other = await theirs_stream.read(shard["ShardId"], None)
    assert mine.records == other.records
    assert mine.records[0]["dynamodb"]["NewImage"] == EVERY_TYPE


def test_an_attribute_value_is_botocore_s_form() -> None:
    assert attribute_value({"N": "1"}) == {"N": "1"}
    assert attribute_value({"B": "AAE="}) == {"B": b"\x00\x01"}
    assert attribute_value({"M": {"a": {"BS": ["AA=="]}}}) == {"M": {"a": {"BS": [b"\x00"]}}}
    for odd in ({}, {"S": "a", "N": "1"}, {"X": 1}):
        with pytest.raises(ValueError, match="attribute value"):
            attribute_value(odd)
