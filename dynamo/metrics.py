"""Counting the DynamoDB calls a client makes, by operation name."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from dynamo import budget

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["CallCounter"]


_GATED = "request_budget_gate"
"""Marks, in a call's own context, that it holds a place among its request's calls under way."""


class CallCounter:
    """Counts every API call the client sends (retries of one call count once), in total and
    against the budget of the request that made it (see dynamo.budget), which may refuse it or
    hold it until fewer of the request's calls are under way. ``on_call``, when given, is told
    the operation name of every call counted."""

    def __init__(
        self, client: DynamoDBClient, *, on_call: Callable[[str], None] | None = None
    ) -> None:
        self.calls: Counter[str] = Counter()
        self._on_call_counted = on_call
        events = client.meta.events
        events.register("before-call.dynamodb", self._on_call)
        # Last, after every handler that may still refuse the call (the circuit breaker's):
        # a place taken is always given back by the call's end.
        # (aiobotocore awaits a handler that is a coroutine function; botocore's types know
        # only plain ones.)
        events.register_last("before-call.dynamodb", cast(Any, self._enter))
        events.register("after-call.dynamodb", self._leave)
        events.register("after-call-error.dynamodb", self._leave)

    def _on_call(self, model: Any, **_: Any) -> None:
        name = str(model.name)
        spending = budget.current()
        if spending is not None:
            spending.charge(name)
        self.calls[name] += 1
        if self._on_call_counted is not None:
            self._on_call_counted(name)

    async def _enter(self, context: dict[str, Any], **_: Any) -> None:
        spending = budget.current()
        if spending is not None and await spending.enter():
            context[_GATED] = spending

    def _leave(self, context: dict[str, Any], **_: Any) -> None:
        spending = context.pop(_GATED, None)
        if isinstance(spending, budget.Budget):
            spending.leave()

    def reset(self) -> None:
        self.calls.clear()

    def snapshot(self) -> dict[str, int]:
        return dict(self.calls)
