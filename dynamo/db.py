"""What an access-pattern function holds: the DynamoDB client, the table's name, the cursor
codec, and the process's cache of immutable items and per-player queues."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from dynamo.cursors import CursorCodec
from dynamo.locks import KeyedLocks
from dynamo.table import Key

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["Calls", "Db", "ImmutableItems"]


class Calls(Protocol):
    """What sends the reads and transactions in place of the client (dynamo/direct.py's
    ``DirectCalls``, named by its shape so that this module, which the Lambda handler imports
    too, needs none of the direct calls' transport)."""

    async def call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]: ...


class ImmutableItems:
    """Raw items that never change once written (family definitions, but for their
    partitions: see dynamo/families.py), kept per process."""

    def __init__(self, max_items: int = 4096) -> None:
        self._items: dict[Key, Any] = {}
        self._max = max_items

    def get(self, key: Key) -> Any | None:
        return self._items.get(key)

    def put(self, key: Key, raw: Any) -> None:
        """Keep ``raw`` (in place of the item kept at ``key``, if any) while room is left."""
        if key in self._items or len(self._items) < self._max:
            self._items[key] = raw


@dataclass(frozen=True)
class Db:
    """What an access-pattern function needs: the client, the table name, the cursor codec, and
    the process's cache of immutable items, per-player queues and per-count-shard queues."""

    client: DynamoDBClient
    table: str
    cursors: CursorCodec
    immutable: ImmutableItems = field(default_factory=ImmutableItems)
    players: KeyedLocks = field(default_factory=KeyedLocks)
    """Queues the plays of each player within this process."""
    counts: KeyedLocks = field(default_factory=KeyedLocks)
    """Queues, within this process, the transactions of first entries that count in the same
    count shard of a board (dynamo/leaderboards.py): on DynamoDB two of them in flight at once
    would cancel one another for the conflict."""
    direct: Calls | None = None
    """Sends the reads (Query, GetItem, BatchGetItem) and the transactions
    (TransactWriteItems) straight over HTTP (dynamo/direct.py); without it they go through
    ``client``."""

    async def query(self, **params: Any) -> dict[str, Any]:
        """The answer of a Query with ``params``, as ``client.query`` returns it."""
        if self.direct is not None:
            return await self.direct.call("Query", params)
        return dict(await self.client.query(**params))

    async def get_item(self, **params: Any) -> dict[str, Any]:
        """The answer of a GetItem with ``params``, as ``client.get_item`` returns it."""
        if self.direct is not None:
            return await self.direct.call("GetItem", params)
        return dict(await self.client.get_item(**params))

    async def batch_get_item(self, **params: Any) -> dict[str, Any]:
        """The answer of a BatchGetItem with ``params``, as ``client.batch_get_item``
        returns it."""
        if self.direct is not None:
            return await self.direct.call("BatchGetItem", params)
        return dict(await self.client.batch_get_item(**params))

    async def transact_write_items(self, **params: Any) -> dict[str, Any]:
        """The answer of a TransactWriteItems with ``params``, as
        ``client.transact_write_items`` returns it (its cancellation raised as the client's
        ``TransactionCanceledException``)."""
        if self.direct is not None:
            return await self.direct.call("TransactWriteItems", params)
        return dict(await self.client.transact_write_items(**params))
