"""Shedding overload: a bounded number of operations execute at once in the process.

Beyond the bound an operation waits for a place, briefly and in a bounded queue; one that does
not get a place in time is refused with SERVICE_OVERLOADED (HTTP 503 with Retry-After) rather
than piling up behind the others and making every request slow.
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
    def __init__(self, *, max_concurrent: int, queue_timeout: float) -> None:
        self.max_concurrent = max_concurrent
        self.queue_timeout = queue_timeout
        self.max_waiting = 4 * max_concurrent
        self._places = asyncio.Semaphore(max_concurrent)
        self._waiting = 0
        self.running = 0
        self.refused = 0

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
