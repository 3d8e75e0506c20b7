"""In-process publish/subscribe of "this board changed" notices."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["Broker", "Listener"]


class Listener:
    """One subscriber's wake-up signal. Notices that arrive while it is busy merge into one:
    a subscriber re-reads the board anyway, so it only needs to know that something changed."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def notify(self) -> None:
        self._changed.set()

    async def wait(self) -> None:
        await self._changed.wait()
        self._changed.clear()


class Broker:
    """Topics are board ids. Publishing never blocks and never fails: a notice for a board
    nobody watches is dropped."""

    def __init__(self) -> None:
        self._listeners: dict[str, set[Listener]] = {}

    def publish(self, topic: str) -> None:
        for listener in self._listeners.get(topic, ()):
            listener.notify()

    @asynccontextmanager
    async def listen(self, topic: str) -> AsyncIterator[Listener]:
        listener = Listener()
        self._listeners.setdefault(topic, set()).add(listener)
        try:
            yield listener
        finally:
            listeners = self._listeners[topic]
            listeners.discard(listener)
            if not listeners:
                del self._listeners[topic]

    def listening(self, topic: str) -> int:
        return len(self._listeners.get(topic, ()))
