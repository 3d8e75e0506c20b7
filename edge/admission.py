"""Shedding overload: a bounded number of operations, and a bounded sum of their costs,
execute at once in the process.

Each operation takes a place before anything of it runs; once its cost is known (edge/cost.py),
and before it executes, it also reserves that many points of the process's capacity. Beyond
either bound an operation waits, briefly and in a bounded queue; one that does not get in in
time is refused with SERVICE_OVERLOADED (HTTP 503 with Retry-After) rather than piling up
behind the others and making every request slow. Points are not handed out first come, first
served: a small operation that fits passes a large one still waiting for room, so heavy
documents wait (or are shed) and small ones keep being answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from dynamo.errors import ErrorCode, LeaderboardError

__all__ = ["RETRY_AFTER_SECONDS", "Admission", "Overloaded"]

RETRY_AFTER_SECONDS = 1


class Overloaded(LeaderboardError):
    """No place was free in time: nothing was done."""

    def __init__(self) -> None:
        super().__init__(
            ErrorCode.SERVICE_OVERLOADED,
            f"the service is at capacity; nothing was done, retry in {RETRY_AFTER_SECONDS} s",
        )


class Admission:
    def __init__(self, *, max_concurrent: int, queue_timeout: float, capacity: int) -> None:
        self.max_concurrent = max_concurrent
        self.queue_timeout = queue_timeout
        self.capacity = capacity
        """Points of cost executing at once."""
        self.max_waiting = 4 * max_concurrent
        self._places = asyncio.Semaphore(max_concurrent)
        self._waiting = 0
        self._room = asyncio.Condition()
        self.points_in_use = 0
        self.running = 0
        self.refused = 0

    @property
    def waiting(self) -> int:
        """Operations waiting for a place."""
        return self._waiting

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the places while the block runs; raise SERVICE_OVERLOADED when none
        frees up within the queue timeout, or at once when the queue is full."""
        if self._places.locked() and self._waiting >= self.max_waiting:
            self.refused += 1
            raise Overloaded()
        self._waiting += 1
        try:
            async with asyncio.timeout(self.queue_timeout):
                await self._places.acquire()
        except TimeoutError:
            self.refused += 1
            raise Overloaded() from None
        finally:
            self._waiting -= 1
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._places.release()

    async def reserve(self, points: int) -> int:
        """Reserve ``points`` of the capacity (an operation's cost; at most the whole
        capacity) and return how many were reserved, for ``release``; raise
        SERVICE_OVERLOADED when they are not free within the queue timeout."""
        points = max(0, min(points, self.capacity))
        async with self._room:
            try:
                async with asyncio.timeout(self.queue_timeout):
                    await self._room.wait_for(lambda: self.points_in_use + points <= self.capacity)
            except TimeoutError:
                self.refused += 1
                raise Overloaded() from None
            self.points_in_use += points
        return points

    async def release(self, points: int) -> None:
        """Give back what ``reserve`` returned."""
        async with self._room:
            self.points_in_use -= points
            self._room.notify_all()
