"""Counting the DynamoDB calls a client makes, by operation name."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from dynamo import budget

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["CallCounter"]


_TURN = "leaderboard_budget_turn"
"""Where a call's request context holds the budget whose turn it took."""


class CallCounter:
    """Counts every API call the client sends (retries of one call count once), in total and
    against the budget of the request that made it (see dynamo.budget), which may refuse it or
    make it wait for its turn."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.calls: Counter[str] = Counter()
        events = client.meta.events
        events.register("before-call.dynamodb", self._on_call)
        # aiobotocore awaits what a handler returns: a turn is waited for before the call.
        events.register("before-call.dynamodb", cast(Callable[..., None], self._take_turn))
        events.register("after-call.dynamodb", self._end_turn)
        events.register("after-call-error.dynamodb", self._end_turn)

    def _on_call(self, model: Any, **_: Any) -> None:
        name = str(model.name)
        spending = budget.current()
        if spending is not None:
            spending.charge(name)
        self.calls[name] += 1

    async def _take_turn(self, context: dict[str, Any], **_: Any) -> None:
        spending = budget.current()
        if spending is not None and await spending.take_turn():
            context[_TURN] = spending

    def _end_turn(self, context: dict[str, Any], **_: Any) -> None:
        spending = context.pop(_TURN, None)
        if spending is not None:
            spending.end_turn()

    def reset(self) -> None:
        self.calls.clear()

    def snapshot(self) -> dict[str, int]:
        return dict(self.calls)
