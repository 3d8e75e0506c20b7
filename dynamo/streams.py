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
_STALE_ITERATOR = frozenset({"ExpiredIteratorException", "TrimmedDataAccessException"})
"""The errors of an iterator held too long (15 minutes) or past records trimmed meanwhile."""


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
        self._next: dict[str, tuple[str | None, str]] = {}
        """Each shard's iterator past its last read, with the sequence number it follows
        (None: the shard's start): a read that continues from there needs no new one."""

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
        """One page of the shard's records after sequence number ``after`` (from the oldest
        one kept when None): up to ``limit`` of them, 1,000 at most, as one GetRecords call
        returns them. A reader applies each page before it asks for the next, so that the
        records of a busy stream are never held back while more keep arriving. A read that
        continues where this stream's last read of the shard stopped goes on with that
        read's iterator (one GetRecords call, not two); an iterator that expired or points at
        trimmed records is replaced."""
        held = self._next.pop(shard_id, None)
        records: list[dict[str, Any]] | None = None
        if held is not None and held[0] == after:
            try:
                records, iterator = await self._records(held[1], limit)
            except ClientError as error:
                if error.response["Error"]["Code"] not in _STALE_ITERATOR:
                    raise
        if records is None:
            try:
                iterator = await self._iterator(shard_id, after)
            except ClientError as error:
                if error.response["Error"]["Code"] == "ResourceNotFoundException":
                    return ShardRead([], finished=True)
                raise
            records, iterator = await self._records(iterator, limit)
        if iterator is not None:
            last = records[-1]["dynamodb"]["SequenceNumber"] if records else after
            self._next[shard_id] = (last, iterator)
        return ShardRead(records, finished=iterator is None)

    async def _iterator(self, shard_id: str, after: str | None) -> str | None:
        kwargs: dict[str, Any] = {"StreamArn": await self.arn(), "ShardId": shard_id}
        if after is None:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        else:
            kwargs["ShardIteratorType"] = "AFTER_SEQUENCE_NUMBER"
            kwargs["SequenceNumber"] = after
        iterator: str | None = (await self._streams.get_shard_iterator(**kwargs)).get(
            "ShardIterator"
        )
        return iterator

    async def _records(
        self, iterator: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of records from ``iterator`` on (up to ``limit``), and the iterator past
        them (None once the shard is closed and read to its end)."""
        if not iterator:
            return [], None
        page = await self._streams.get_records(ShardIterator=iterator, Limit=min(_PAGE, limit))
        records = [dict(r) for r in page.get("Records", [])]
        return records, page.get("NextShardIterator")
