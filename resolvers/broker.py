"""In-process publish/subscribe of "this board changed" notices, and reads shared by the
subscribers a notice wakes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar

from rankindex.notices import Notice
from resolvers.local_writes import LocalWrites

__all__ = ["Broker", "Listener", "Peers", "refresh_quiet_topics"]

T = TypeVar("T")


class Peers(Protocol):
    """The other worker processes of this one's host and master (leaderboard/peers.py)."""

    def tell(self, notices: Sequence[Notice]) -> None:
        """A committed write's notices, for every sibling (never blocks, never fails)."""

    def tell_resync(self) -> None:
        """A write whose outcome is unknown: every sibling treats it as a lost place."""


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
    and a subscriber that arrives between notices reads nothing.

    :meth:`refresh` is the backstop behind the notices: a watched topic that has had no
    notice for a while gets one, so that its subscribers re-read whatever the change feed
    does (lags behind a loaded projector, or loses a notice without noticing)."""

    def __init__(
        self, *, shared_read_age: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.clock = clock
        self.shared_read_age = shared_read_age
        """Seconds a finished shared read still answers newcomers when no notice came since:
        what changes without a notice (a player's name) is at most that old on a first push."""
        self.writes = LocalWrites(clock=clock)
        """The boards this process wrote to lately (their subscribers' reads and the answers
        the response cache stores are then read consistently)."""
        self.peers: Peers | None = None
        """The sibling worker processes, told of every write through this one (set by the
        app when it runs as one of several workers)."""
        self._listeners: dict[str, set[Listener]] = {}
        self._generation: dict[str, int] = {}
        self._reads: dict[str, dict[Hashable, _Read]] = {}
        self._noticed: dict[str, float] = {}
        """When each watched topic last had a notice (or its first listener)."""

    def publish(self, topic: str) -> None:
        listeners = self._listeners.get(topic)
        if not listeners:
            return
        self._generation[topic] += 1
        self._noticed[topic] = self.clock()
        for listener in listeners:
            listener.notify()

    def refresh(self, quiet_for: float) -> int:
        """A notice for every watched topic that has had none for ``quiet_for`` seconds; how
        many got one. Its subscribers share one read, and push only if the board changed."""
        since = self.clock() - quiet_for
        quiet = [topic for topic, at in self._noticed.items() if at <= since]
        for topic in quiet:
            self.publish(topic)
        return len(quiet)

    def publish_all(self) -> None:
        """A notice for every watched topic: when notices may have been lost, every
        subscriber re-reads."""
        for topic in list(self._listeners):
            self.publish(topic)

    @asynccontextmanager
    async def listen(self, topic: str) -> AsyncIterator[Listener]:
        listener = Listener()
        if topic not in self._listeners:
            self._listeners[topic] = set()
            self._generation[topic] = 0
            self._reads[topic] = {}
            self._noticed[topic] = self.clock()
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
                del self._noticed[topic]

    def listening(self, topic: str) -> int:
        return len(self._listeners.get(topic, ()))

    async def shared(self, topic: str, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
        """The result of ``read()`` for ``key`` of a watched ``topic``, begun since the topic's
        latest notice: that read's, in progress or finished less than ``shared_read_age``
        ago, or else (none, too old, or failed) a read begun now. The read runs in a task of
        its own, so a caller that is cancelled cancels nobody else's wait."""
        reads = self._reads[topic]
        generation = self._generation[topic]
        found = reads.get(key)
        if found is None or not found.answers(generation, self.shared_read_age):
            found = _Read(generation, asyncio.create_task(_run(read)), self.clock)
            reads[key] = found
        result: T = await asyncio.shield(found.task)
        return result


async def refresh_quiet_topics(broker: Broker, quiet_for: float) -> None:
    """Run :meth:`Broker.refresh` for ever, checking every second (or every ``quiet_for``
    seconds, if less): a subscriber re-reads its board at most about a second later than
    ``quiet_for`` after the latest notice."""
    every = min(1.0, quiet_for)
    while True:
        await asyncio.sleep(every)
        broker.refresh(quiet_for)


async def _run(read: Callable[[], Awaitable[T]]) -> T:
    return await read()


class _Read:
    """One shared read: the generation it began in, its task, and when it finished (by the
    broker's clock)."""

    def __init__(
        self, generation: int, task: asyncio.Task[Any], clock: Callable[[], float]
    ) -> None:
        self.generation = generation
        self.task = task
        self.clock = clock
        self.finished: float | None = None
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.finished = self.clock()
        if not task.cancelled():
            task.exception()  # taken, whether or not anyone was still waiting for it

    def answers(self, generation: int, age: float) -> bool:
        """Whether a caller of ``generation`` may have this read's result."""
        if generation != self.generation:
            return False
        if self.finished is None:
            return True
        task = self.task
        if task.cancelled() or task.exception() is not None:
            return False
        return self.clock() - self.finished < age
