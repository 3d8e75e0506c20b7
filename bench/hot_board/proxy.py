"""The fault proxy between the service and DynamoDB Local, applying DynamoDB's
transaction-conflict rule, as the clients' phases see it: its URL, and its counts reset and
copied between phases.

:class:`ThreadedProxy` runs the proxy on an event loop of its own in a thread of the
benchmark's process, so that the clients' work never delays what the proxy holds and
forwards.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Protocol, TypeVar

from bench.hot_board.conflicts import ProxyCounts, counts_of
from faultproxy import FaultProxy

__all__ = ["ConflictProxy", "ThreadedProxy"]

T = TypeVar("T")

_SEED = 20261121


class ConflictProxy(Protocol):
    """A proxy applying the conflict rule, as a phase uses it."""

    @property
    def url(self) -> str: ...

    async def reset(self) -> None:
        """Count from zero again."""

    async def counts(self) -> ProxyCounts:
        """A copy of the counts since the last reset."""


class ThreadedProxy:
    """A :class:`FaultProxy` in front of ``upstream``, applying the conflict rule with each
    transaction holding its items ``hold`` seconds, on its own event loop in a thread;
    started on entering the ``with`` block and stopped on leaving it."""

    def __init__(self, upstream: str, *, hold: float) -> None:
        self.upstream = upstream
        self.hold = hold
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="fault-proxy", daemon=True
        )
        self._proxy: FaultProxy | None = None

    @property
    def url(self) -> str:
        return self._running.url

    @property
    def _running(self) -> FaultProxy:
        if self._proxy is None:
            raise RuntimeError("the proxy is not running")
        return self._proxy

    def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make()`` on the proxy's loop and wait for its result."""

        async def wrapped() -> T:
            return await make()

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result()

    def __enter__(self) -> ThreadedProxy:
        self._thread.start()

        async def start() -> FaultProxy:
            proxy = FaultProxy(self.upstream, seed=_SEED)
            await proxy.start()
            proxy.emulate_conflicts(hold=self.hold)
            return proxy

        try:
            self._proxy = self._call(start)
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if self._proxy is not None:
                self._call(self._proxy.close)
        finally:
            self._stop()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def reset(self) -> None:
        proxy = self._running

        async def reset() -> None:
            proxy.reset_counts()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(reset(), self._loop))

    async def counts(self) -> ProxyCounts:
        proxy = self._running

        async def copy() -> ProxyCounts:
            return counts_of(proxy)

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(copy(), self._loop))
