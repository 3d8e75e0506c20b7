"""Counting the DynamoDB calls a client makes, by operation name."""

from __future__ import annotations

from collections import Counter
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["CallCounter", "counting_calls"]

_current: ContextVar[Counter[str] | None] = ContextVar("dynamodb_calls", default=None)


def counting_calls() -> Counter[str]:
    """Start counting the calls made from the current context (one request, say) and below:
    tasks it creates inherit the counter."""
    calls: Counter[str] = Counter()
    _current.set(calls)
    return calls


class CallCounter:
    """Counts every API call the client sends (retries of one call count once), in total and
    for the context that made it (see counting_calls)."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb", self._on_call)

    def _on_call(self, model: Any, **_: Any) -> None:
        name = str(model.name)
        self.calls[name] += 1
        current = _current.get()
        if current is not None:
            current[name] += 1

    def reset(self) -> None:
        self.calls.clear()

    def snapshot(self) -> dict[str, int]:
        return dict(self.calls)
