"""Recording what every DynamoDB request of a client reads and writes, item by item.

:class:`CapacityRecorder` hooks a client's events. Before a request it asks DynamoDB to return
the capacity it consumed (``ReturnConsumedCapacity=INDEXES``, which DynamoDB Local answers for
every single-item, batch, query and transaction operation) and, for a write, reads the items
it will touch as they stand; after the answer it reads them again. A Query whose answer leaves
out items it read (``Select=COUNT``, a projection or a filter) is read again without them, on
the same page boundaries. Those reads go through a second client of their own (the
*inspector*), so they are neither recorded nor counted against the service.

From the images before and after, :mod:`bench.capacity.units` computes what DynamoDB bills,
per item and per partition key, and the record keeps what DynamoDB Local reported beside it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dynamo.keys import INDEX_ATTRIBUTES

__all__ = ["INDEX_KEYS", "CapacityRecorder", "RecordedCall", "RecordedRead", "RecordedWrite"]

INDEX_KEYS = INDEX_ATTRIBUTES
"""Each global secondary index's key attributes, as the table layer declares them."""

_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
_QUERY_EXTRAS = ("Select", "ProjectionExpression", "FilterExpression")
"""What makes a Query's answer leave out items (or attributes) it read."""
_NOT_REPLAYED = frozenset(
    {
        *_QUERY_EXTRAS,
        "ReturnConsumedCapacity",
        "ExpressionAttributeNames",
        "ExpressionAttributeValues",
    }
)
_CONTEXT = "capacity_recorder"
_BATCH = 100

Item = dict[str, Any]
KeyTuple = tuple[str, str]


@dataclass(frozen=True)
class RecordedWrite:
    """One item a write request touched: how (``Put``, ``Update``, ``Delete`` or
    ``ConditionCheck``), and the item before and after (None when absent)."""

    action: str
    key: KeyTuple
    before: Item | None
    after: Item | None
    transactional: bool


@dataclass(frozen=True)
class RecordedRead:
    """One read of a request: the items it read (whole, as stored), whether it was strongly
    consistent, and whether each item is billed on its own (GetItem, BatchGetItem,
    TransactGetItems) or the page as one (Query, Scan). ``partition`` names the partition
    read: the table's ``pk`` or an index's partition key value."""

    partition: str
    items: list[Item]
    consistent: bool
    per_item: bool
    transactional: bool = False
    missing: int = 0
    """Keys asked for that held no item (each still billed one unit)."""


@dataclass
class RecordedCall:
    """One DynamoDB request: its operation, when it was answered, its error code if it failed,
    what it read and wrote, and the capacity DynamoDB Local reported (table and each index)."""

    operation: str
    at: float = 0.0
    error: str | None = None
    reads: list[RecordedRead] = field(default_factory=list)
    writes: list[RecordedWrite] = field(default_factory=list)
    reported_table: float = 0.0
    reported_indexes: dict[str, float] = field(default_factory=dict)
    reported: bool = False


def _key_of(item: Mapping[str, Any]) -> KeyTuple:
    return (str(item["pk"]["S"]), str(item["sk"]["S"]))


def _wire_key(key: KeyTuple) -> Item:
    return {"pk": {"S": key[0]}, "sk": {"S": key[1]}}


def _write_targets(operation: str, params: Mapping[str, Any]) -> list[tuple[str, KeyTuple, bool]]:
    """The items a write request names: (action, key, transactional) each."""
    if operation == "PutItem":
        return [("Put", _key_of(params["Item"]), False)]
    if operation == "UpdateItem":
        return [("Update", _key_of(params["Key"]), False)]
    if operation == "DeleteItem":
        return [("Delete", _key_of(params["Key"]), False)]
    targets: list[tuple[str, KeyTuple, bool]] = []
    if operation == "TransactWriteItems":
        for entry in params["TransactItems"]:
            ((action, body),) = entry.items()
            source = body["Item"] if action == "Put" else body["Key"]
            targets.append((action, _key_of(source), True))
    elif operation == "BatchWriteItem":
        for requests in params["RequestItems"].values():
            for request in requests:
                if "PutRequest" in request:
                    targets.append(("Put", _key_of(request["PutRequest"]["Item"]), False))
                else:
                    targets.append(("Delete", _key_of(request["DeleteRequest"]["Key"]), False))
    return targets


def _placeholders_in(expression: str, mapping: Mapping[str, Any] | None) -> dict[str, Any]:
    """The entries of ``mapping`` whose placeholder ``expression`` uses."""
    return {
        k: v
        for k, v in (mapping or {}).items()
        if re.search(re.escape(k) + r"(?![A-Za-z0-9_])", expression)
    }


def _partition_attribute(params: Mapping[str, Any]) -> str:
    index = params.get("IndexName")
    return INDEX_KEYS[index][0] if index in INDEX_KEYS else "pk"


class CapacityRecorder:
    """Records every request ``client`` sends, reading item images with ``inspector`` (another
    client on the same endpoint) on the table ``table``."""

    def __init__(self, client: Any, inspector: Any, table: str) -> None:
        self.calls: list[RecordedCall] = []
        self._inspector = inspector
        self._table = table
        events = client.meta.events
        events.register("provide-client-params.dynamodb", self._before)
        events.register("after-call.dynamodb", self._after)

    def take(self) -> list[RecordedCall]:
        """The calls recorded since the last take, oldest first."""
        calls, self.calls = self.calls, []
        return calls

    async def images(self, keys: Sequence[KeyTuple]) -> dict[KeyTuple, Item]:
        """The items at ``keys`` as they stand (strongly consistent), by key."""
        found: dict[KeyTuple, Item] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _BATCH):
            pending: Any = {
                self._table: {
                    "Keys": [_wire_key(k) for k in unique[start : start + _BATCH]],
                    "ConsistentRead": True,
                }
            }
            while pending:
                answer = await self._inspector.batch_get_item(RequestItems=pending)
                for item in answer.get("Responses", {}).get(self._table, []):
                    found[_key_of(item)] = item
                pending = answer.get("UnprocessedKeys") or None
        return found

    async def _before(
        self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        operation = str(model.name)
        if "ReturnConsumedCapacity" in model.input_shape.members:
            params["ReturnConsumedCapacity"] = "INDEXES"
        targets = _write_targets(operation, params) if operation in _WRITES else []
        before = await self.images([key for _, key, _ in targets]) if targets else {}
        context[_CONTEXT] = (operation, dict(params), targets, before)

    async def _after(self, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        state = context.pop(_CONTEXT, None)
        if state is None:
            return
        operation, params, targets, before = state
        call = RecordedCall(operation)
        error = parsed.get("Error") or {}
        call.error = str(error.get("Code")) if error else None
        self._reported(call, parsed.get("ConsumedCapacity"))
        if call.error is None:
            if targets:
                after = await self.images([key for _, key, _ in targets])
                call.writes = [
                    RecordedWrite(action, key, before.get(key), after.get(key), transactional)
                    for action, key, transactional in targets
                ]
            call.reads = await self._reads(operation, params, parsed)
        call.at = time.perf_counter()
        self.calls.append(call)

    @staticmethod
    def _reported(call: RecordedCall, consumed: Any) -> None:
        if consumed is None:
            return
        call.reported = True
        for part in consumed if isinstance(consumed, list) else [consumed]:
            table = part.get("Table")
            indexes = part.get("GlobalSecondaryIndexes") or {}
            call.reported_table += float(
                table["CapacityUnits"] if table else part.get("CapacityUnits", 0.0)
            )
            for name, units in indexes.items():
                call.reported_indexes[name] = call.reported_indexes.get(name, 0.0) + float(
                    units["CapacityUnits"]
                )

    async def _reads(
        self, operation: str, params: Mapping[str, Any], parsed: Mapping[str, Any]
    ) -> list[RecordedRead]:
        if operation in ("Query", "Scan"):
            return [await self._query_read(operation, params, parsed)]
        if operation == "GetItem":
            return await self._key_reads(
                [_key_of(params["Key"])], bool(params.get("ConsistentRead")), False
            )
        if operation == "BatchGetItem":
            reads: list[RecordedRead] = []
            unprocessed = parsed.get("UnprocessedKeys") or {}
            for request in params["RequestItems"].values():
                left = {_key_of(k) for k in (unprocessed.get(self._table) or {}).get("Keys", [])}
                keys = [_key_of(k) for k in request["Keys"] if _key_of(k) not in left]
                reads += await self._key_reads(keys, bool(request.get("ConsistentRead")), False)
            return reads
        if operation == "TransactGetItems":
            keys = [_key_of(entry["Get"]["Key"]) for entry in params["TransactItems"]]
            return await self._key_reads(keys, True, True)
        return []

    async def _key_reads(
        self, keys: Sequence[KeyTuple], consistent: bool, transactional: bool
    ) -> list[RecordedRead]:
        found = await self.images(keys)
        partitions = list(dict.fromkeys(key[0] for key in keys))
        return [
            RecordedRead(
                partition,
                [found[k] for k in keys if k[0] == partition and k in found],
                consistent,
                True,
                transactional,
                missing=sum(1 for k in keys if k[0] == partition and k not in found),
            )
            for partition in partitions
        ]

    async def _query_read(
        self, operation: str, params: Mapping[str, Any], parsed: Mapping[str, Any]
    ) -> RecordedRead:
        items: list[Item] = list(parsed.get("Items") or [])
        if any(extra in params for extra in _QUERY_EXTRAS):
            items = await self._replay(operation, params)
        attribute = _partition_attribute(params)
        partition = str(items[0][attribute]["S"]) if items else "(nothing read)"
        return RecordedRead(partition, items, bool(params.get("ConsistentRead")), False)

    async def _replay(self, operation: str, params: Mapping[str, Any]) -> list[Item]:
        """The items a Query page (or Scan page) read, read again whole."""
        replay = {k: v for k, v in params.items() if k not in _NOT_REPLAYED}
        condition = str(params.get("KeyConditionExpression", ""))
        names = _placeholders_in(condition, params.get("ExpressionAttributeNames"))
        values = _placeholders_in(condition, params.get("ExpressionAttributeValues"))
        if names:
            replay["ExpressionAttributeNames"] = names
        if values:
            replay["ExpressionAttributeValues"] = values
        method = self._inspector.query if operation == "Query" else self._inspector.scan
        answer = await method(**replay)
        return list(answer.get("Items") or [])
