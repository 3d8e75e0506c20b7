"""Counting the DynamoDB calls a client makes, by operation name."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["CallCounter"]


class CallCounter:
    """Counts every API call the client sends (retries of one call count once)."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb", self._on_call)

    def _on_call(self, model: Any, **_: Any) -> None:
        self.calls[str(model.name)] += 1

    def reset(self) -> None:
        self.calls.clear()

    def snapshot(self) -> dict[str, int]:
        return dict(self.calls)
