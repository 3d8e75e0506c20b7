"""What one request may spend of the database: a deadline, a number of calls, and how many of
them may be in flight at once.

A request may also have only so many calls under way at once: a document that reads a hundred
items' lists does not take every connection of the process's pool at once, and the calls of
other requests keep finding one.

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
    max_in_flight: int | None = None
    """How many of its calls may be under way at once; None (or 0) for no bound."""
    calls: Counter[str] = field(default_factory=Counter)
    rank_index_fallbacks: int = 0
    """Rank reads the index failed to answer (Redis unreachable, timed out, its pool full)
    and the table's COUNTs answered instead."""
    _gate: asyncio.Semaphore | None = field(default=None, init=False, repr=False)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def limit(
        self, *, seconds: float | None, max_calls: int | None, max_in_flight: int | None = None
    ) -> None:
        """Give the budget a deadline ``seconds`` from now, a cap on its calls (the calls
        already made count toward it) and on its calls under way at once."""
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.max_calls = max_calls
        self.max_in_flight = max_in_flight
        # (0, like None, leaves them unbounded.)
        self._gate = asyncio.Semaphore(max_in_flight) if max_in_flight else None

    async def enter(self) -> bool:
        """Wait until one more call of the request may be under way; whether it had to ask
        (then ``leave`` once the call is over)."""
        if self._gate is None:
            return False
        await self._gate.acquire()
        return True

    def leave(self) -> None:
        if self._gate is not None:
            self._gate.release()

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never negative); None without a deadline."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

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


def room_left(seconds: float, calls: int) -> bool:
    """Whether the request running in this context (if any) has ``seconds`` and ``calls``
    left: what a job that works in steps within one request asks before each step."""
    spending = _current.get()
    if spending is None:
        return True
    left = spending.remaining()
    if left is not None and left < seconds:
        return False
    return spending.max_calls is None or spending.max_calls - spending.total >= calls
