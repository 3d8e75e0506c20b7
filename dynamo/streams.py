"""Reading the table's stream (DynamoDB Streams): its shards and their records in order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient
    from types_aiobotocore_dynamodbstreams import DynamoDBStreamsClient

__all__ = ["ShardRead", "TableStream"]

_PAGE = 1000


@dataclass(frozen=True)
class ShardRead:
    """Records read from one shard, and whether the shard is closed and fully read."""

    records: list[dict[str, Any]]
    finished: bool


class TableStream:
    """The stream of one table. Records come raw, as Lambda receives them (``eventName``,
    ``dynamodb.Keys``, ``dynamodb.NewImage``/``OldImage``, ``dynamodb.SequenceNumber``)."""

    def __init__(self, tables: DynamoDBClient, streams: DynamoDBStreamsClient, table: str):
        self._tables = tables
        self._streams = streams
        self._table = table
        self._arn: str | None = None

    async def arn(self) -> str:
        if self._arn is None:
            described = await self._tables.describe_table(TableName=self._table)
            arn = described["Table"].get("LatestStreamArn")
            if not arn:
                raise RuntimeError(f"table {self._table} has no stream")
            self._arn = arn
        return self._arn

    async def shards(self) -> list[dict[str, Any]]:
        """Every shard, parents listed before their children."""
        shards: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"StreamArn": await self.arn()}
        while True:
            described = await self._streams.describe_stream(**kwargs)
            page = described["StreamDescription"]
            shards.extend(dict(s) for s in page.get("Shards", []))
            last = page.get("LastEvaluatedShardId")
            if not last:
                return shards
            kwargs["ExclusiveStartShardId"] = last

    async def read(self, shard_id: str, after: str | None, limit: int = _PAGE) -> ShardRead:
        """Up to ``limit`` records of the shard after sequence number ``after`` (from the
        oldest one kept when None)."""
        kwargs: dict[str, Any] = {"StreamArn": await self.arn(), "ShardId": shard_id}
        if after is None:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        else:
            kwargs["ShardIteratorType"] = "AFTER_SEQUENCE_NUMBER"
            kwargs["SequenceNumber"] = after
        try:
            iterator = (await self._streams.get_shard_iterator(**kwargs)).get("ShardIterator")
        except ClientError as error:
            if error.response["Error"]["Code"] == "ResourceNotFoundException":
                return ShardRead([], finished=True)
            raise
        records: list[dict[str, Any]] = []
        while iterator and len(records) < limit:
            page = await self._streams.get_records(
                ShardIterator=iterator, Limit=min(_PAGE, limit - len(records))
            )
            got = page.get("Records", [])
            records.extend(dict(r) for r in got)
            iterator = page.get("NextShardIterator")
            if not got:
                break
        return ShardRead(records, finished=iterator is None)
