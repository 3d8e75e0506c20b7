"""What one request may spend of the database: a deadline, a number of calls, and how many of
them may be in flight at once.

A budget is begun for each request (and for each push of a subscription) and held in a context
variable, so every task the request starts, and every callback a DataLoader schedules for it,
charges the same budget. Each DynamoDB call is charged before it is sent: past the deadline,
or at the cap, the call is refused and never reaches the database, so a request that ran out
stops making calls even where a task of it is still running.

A request whose calls fan out (a page of players, each with its own Query) sends at most
``max_in_flight`` of them at once; the others wait for one of them to be answered. Its calls
then take turns with every other request's, in the client's connection pool and on the event
loop, instead of queueing a hundred calls ahead of them.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field

from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.resilience import unavailable

__all__ = ["Budget", "begin", "current"]

_current: ContextVar[Budget | None] = ContextVar("request_budget", default=None)


@dataclass
class Budget:
    """The calls of one request, by operation name, and what it may still make."""

    deadline: float | None = None
    """A ``time.monotonic()`` instant after which no call is made; None for none."""
    max_calls: int | None = None
    """How many calls the request may make in all; None for no cap."""
    calls: Counter[str] = field(default_factory=Counter)
    max_in_flight: int | None = None
    """How many of its calls may await their answers at once; None for no bound."""
    _turns: asyncio.Semaphore | None = field(default=None, repr=False)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def limit(
        self, *, seconds: float | None, max_calls: int | None, max_in_flight: int | None = None
    ) -> None:
        """Give the budget a deadline ``seconds`` from now, a cap on its calls (the calls
        already made count toward it) and a bound on its calls in flight."""
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.max_calls = max_calls
        self.max_in_flight = max_in_flight
        self._turns = asyncio.Semaphore(max_in_flight) if max_in_flight else None

    async def take_turn(self) -> bool:
        """Wait until one more call may be in flight; whether a turn was taken (False when
        the calls in flight are not bounded). Each turn taken is given back with
        :meth:`end_turn` once the call is answered."""
        if self._turns is None:
            return False
        await self._turns.acquire()
        return True

    def end_turn(self) -> None:
        if self._turns is not None:
            self._turns.release()

    def charge(self, operation: str) -> None:
        """Count one call about to be sent; refuse it past the deadline or at the cap."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise unavailable(" (the request ran out of time)")
        if self.max_calls is not None and self.total >= self.max_calls:
            raise LeaderboardError(
                ErrorCode.COST_LIMIT_EXCEEDED,
                f"the request reached its limit of {self.max_calls} database calls",
            )
        self.calls[operation] += 1


def begin(*, seconds: float | None = None, max_calls: int | None = None) -> Budget:
    """Start a budget for the current context (one request, say) and everything it starts."""
    budget = Budget()
    budget.limit(seconds=seconds, max_calls=max_calls)
    _current.set(budget)
    return budget


def current() -> Budget | None:
    """The budget of the request running in this context, if any."""
    return _current.get()
