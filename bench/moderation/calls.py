"""What a client's DynamoDB calls write and how long they take: the items written, by kind
(put, updated, deleted), and the time spent waiting for the calls, by operation.

A TransactWriteItems counts each of its Put, Update and Delete items (a ConditionCheck
writes nothing), a BatchWriteItem each of its requests, and PutItem, UpdateItem and
DeleteItem one item each. Calls are counted as they are sent, once however often the client
retries them. A call is timed from its request being sent to its answer parsed, retries
included; calls under way together are each timed in full.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["KINDS", "CallTimer", "WriteCounter", "written_items"]

KINDS = ("put", "update", "delete")
_SINGLE = {"PutItem": "put", "UpdateItem": "update", "DeleteItem": "delete"}
_TRANSACT = {"Put": "put", "Update": "update", "Delete": "delete"}
_BATCH = {"PutRequest": "put", "DeleteRequest": "delete"}


def written_items(operation: str, params: Mapping[str, Any]) -> Counter[str]:
    """The items one call of ``operation`` with ``params`` writes, by kind."""
    found: Counter[str] = Counter()
    if operation in _SINGLE:
        found[_SINGLE[operation]] += 1
    elif operation == "TransactWriteItems":
        for item in params.get("TransactItems", []):
            found.update(_TRANSACT[k] for k in item if k in _TRANSACT)
    elif operation == "BatchWriteItem":
        for requests in params.get("RequestItems", {}).values():
            for request in requests:
                found.update(_BATCH[k] for k in request if k in _BATCH)
    return found


class WriteCounter:
    """Counts the items written through ``client``, by kind (see :func:`written_items`)."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.items: Counter[str] = Counter()
        client.meta.events.register("before-parameter-build.dynamodb", self._on_call)

    def _on_call(self, params: Mapping[str, Any], model: Any, **_: Any) -> None:
        self.items.update(written_items(str(model.name), params))

    def reset(self) -> None:
        self.items.clear()

    def snapshot(self) -> dict[str, int]:
        """The items written since the last reset, for every kind (0 when none)."""
        return {kind: self.items[kind] for kind in KINDS}


_STARTED = "bench_moderation_started"
"""Marks, in a call's own context, its operation and when it was sent."""


class CallTimer:
    """Times the DynamoDB calls sent through ``client``, summed by operation."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        events = client.meta.events
        events.register("before-call.dynamodb", self._start)
        events.register("after-call.dynamodb", self._stop)
        events.register("after-call-error.dynamodb", self._stop)

    def _start(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        context[_STARTED] = (str(model.name), time.perf_counter())

    def _stop(self, context: dict[str, Any], **_: Any) -> None:
        started = context.pop(_STARTED, None)
        if started is not None:
            name, at = started
            self.seconds[name] += time.perf_counter() - at

    def reset(self) -> None:
        self.seconds.clear()

    def snapshot(self) -> dict[str, float]:
        """Milliseconds spent in each operation's calls since the last reset, to a tenth."""
        return {name: round(s * 1000, 1) for name, s in self.seconds.items()}
