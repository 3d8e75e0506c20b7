"""Per-key queues within one process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """One asyncio lock per key, alive only while someone holds or waits for it.

    Every play of a player updates the same player item, so two plays of one player can only
    commit one after the other (and two first entries counted in one count shard of a board
    likewise). Queueing them here, per process, spends no transaction on a race the process
    could have seen coming; races between processes are still settled by the transaction's
    conditions and retries.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)
