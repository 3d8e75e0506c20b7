"""In-process publish/subscribe of "this board changed" notices, and reads shared by the
subscribers a notice wakes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

__all__ = ["Broker", "Listener"]

T = TypeVar("T")


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
    nobody watches is dropped.

    A watched topic counts its notices (its generation). :meth:`shared` hands every caller
    asking for the same key of a topic the one read begun since the topic's latest notice: a
    notice that wakes a thousand subscribers of a board makes one read of it, not a thousand,
    and a subscriber that arrives between notices reads nothing."""

    def __init__(self) -> None:
        self._listeners: dict[str, set[Listener]] = {}
        self._generation: dict[str, int] = {}
        self._reads: dict[str, dict[Hashable, tuple[int, asyncio.Task[Any]]]] = {}

    def publish(self, topic: str) -> None:
        listeners = self._listeners.get(topic)
        if not listeners:
            return
        self._generation[topic] += 1
        for listener in listeners:
            listener.notify()

    @asynccontextmanager
    async def listen(self, topic: str) -> AsyncIterator[Listener]:
        listener = Listener()
        if topic not in self._listeners:
            self._listeners[topic] = set()
            self._generation[topic] = 0
            self._reads[topic] = {}
        self._listeners[topic].add(listener)
        try:
            yield listener
        finally:
            listeners = self._listeners[topic]
            listeners.discard(listener)
            if not listeners:
                del self._listeners[topic]
                del self._generation[topic]
                del self._reads[topic]

    def listening(self, topic: str) -> int:
        return len(self._listeners.get(topic, ()))

    async def shared(self, topic: str, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
        """The result of ``read()`` for ``key`` of a watched ``topic``, begun since the topic's
        latest notice: begun now if no such read exists (or the last one failed), else that
        read's, in progress or done. The read runs in a task of its own, so a caller that is
        cancelled cancels nobody else's wait."""
        reads = self._reads[topic]
        generation = self._generation[topic]
        found = reads.get(key)
        if found is None or found[0] != generation or _failed(found[1]):

            async def run() -> T:
                return await read()

            task: asyncio.Task[T] = asyncio.create_task(run())
            task.add_done_callback(_retrieve)
            reads[key] = (generation, task)
        else:
            task = found[1]
        result: T = await asyncio.shield(task)
        return result


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Take a failed read's exception, whether or not anyone was still waiting for it."""
    if not task.cancelled():
        task.exception()


def _failed(task: asyncio.Task[Any]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)
