"""Counting the DynamoDB calls a client makes, by operation name."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from dynamo import budget

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["CallCounter"]


class CallCounter:
    """Counts every API call the client sends (retries of one call count once), in total and
    against the budget of the request that made it (see dynamo.budget), which may refuse it."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb", self._on_call)

    def _on_call(self, model: Any, **_: Any) -> None:
        name = str(model.name)
        spending = budget.current()
        if spending is not None:
            spending.charge(name)
        self.calls[name] += 1

    def reset(self) -> None:
        self.calls.clear()

    def snapshot(self) -> dict[str, int]:
        return dict(self.calls)
