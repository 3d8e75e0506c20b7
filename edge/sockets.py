"""The process's WebSockets and subscriptions, counted against their limits.

A socket is counted from its upgrade request to its close, a subscription from its
``subscribe`` message to its end. Past a limit the socket is refused before its upgrade, and
the subscription with an error message on its socket; nothing else is affected. When the
process stops, every socket still open is closed with one close code (``close_all``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from dynamo.errors import ErrorCode, LeaderboardError
from edge.recording import Recorder, Unrecorded

__all__ = ["Closable", "SocketLimits", "Sockets"]


class Closable(Protocol):
    """An open socket, as far as closing it goes (aiohttp's ``WebSocketResponse``)."""

    async def close(self, *, code: int = ..., message: bytes = ...) -> bool: ...


@dataclass(frozen=True)
class SocketLimits:
    """The bounds of WebSockets (leaderboard/config.py ``Limits`` sets them)."""

    max_sockets: int = 1000
    """Open WebSockets in the process."""
    max_sockets_per_client: int = 16
    """Open WebSockets from one client address."""
    max_subscriptions: int = 2000
    """Running subscriptions in the process."""
    max_operations_per_socket: int = 10
    """Running operations (subscriptions, queries, mutations) on one socket."""
    init_timeout: float = 5.0
    """Seconds a socket has to send ``connection_init`` before it is closed (4408)."""
    max_buffer_bytes: int = 1 << 20
    """Bytes waiting to be sent on one socket before its consumer is dropped."""
    send_timeout: float = 10.0
    """Seconds one message may take to be handed to the socket before its consumer is
    dropped."""
    max_message_bytes: int = 1 << 20
    """The largest message a client may send."""
    heartbeat: float = 30.0
    """Seconds between pings; a socket that does not answer one is closed."""


@dataclass
class Sockets:
    """Open sockets, by client address, and running subscriptions."""

    limits: SocketLimits = field(default_factory=SocketLimits)
    open: int = 0
    subscriptions: int = 0
    refused: int = 0
    """Sockets and subscriptions refused at a limit since the start."""
    dropped: int = 0
    """Sockets closed because their consumer fell behind."""
    recorder: Recorder = field(default_factory=Unrecorded)
    """Told the counts of sockets and subscriptions whenever they change."""
    _by_client: Counter[str] = field(default_factory=Counter)
    _live: set[Closable] = field(default_factory=set)

    def refusal(self, address: str) -> LeaderboardError | None:
        """Why a socket from ``address`` may not open now; None when it may."""
        limits = self.limits
        if self._by_client[address] >= limits.max_sockets_per_client:
            self.refused += 1
            return LeaderboardError(
                ErrorCode.THROTTLED,
                f"this address has {limits.max_sockets_per_client} WebSockets open, its "
                "limit: close one first",
            )
        if self.open >= limits.max_sockets:
            self.refused += 1
            return LeaderboardError(
                ErrorCode.SERVICE_OVERLOADED,
                f"the service has {limits.max_sockets} WebSockets open, its limit: retry shortly",
            )
        return None

    @contextmanager
    def holding(self, address: str) -> Iterator[None]:
        """Count a socket from ``address`` while the block runs."""
        self.open += 1
        self._by_client[address] += 1
        self._changed()
        try:
            yield
        finally:
            self.open -= 1
            self._by_client[address] -= 1
            if not self._by_client[address]:
                del self._by_client[address]
            self._changed()

    def opened(self, socket: Closable) -> None:
        """Remember an upgraded socket until :meth:`closed`, to close it when the process
        stops."""
        self._live.add(socket)

    def closed(self, socket: Closable) -> None:
        self._live.discard(socket)

    async def close_all(self, code: int, message: bytes, *, wait: float) -> int:
        """Send every open socket a close frame with ``code`` and wait up to ``wait`` seconds
        for their clients' answers (a socket whose client has not answered by then is closed
        without it); returns how many sockets were open."""
        live = list(self._live)
        self._live.clear()
        if live:
            closing = [asyncio.create_task(s.close(code=code, message=message)) for s in live]
            await asyncio.wait(closing, timeout=wait)
            for unanswered in closing:
                unanswered.cancel()
            await asyncio.gather(*closing, return_exceptions=True)
        return len(live)

    def open_from(self, address: str) -> int:
        return self._by_client.get(address, 0)

    def start_subscription(self) -> LeaderboardError | None:
        """Count one more running subscription, or say why there is no room for it."""
        if self.subscriptions >= self.limits.max_subscriptions:
            self.refused += 1
            return LeaderboardError(
                ErrorCode.SERVICE_OVERLOADED,
                f"the service runs {self.limits.max_subscriptions} subscriptions, its limit: "
                "retry shortly",
            )
        self.subscriptions += 1
        self._changed()
        return None

    def end_subscription(self) -> None:
        self.subscriptions -= 1
        self._changed()

    def _changed(self) -> None:
        self.recorder.sockets(self.open, self.subscriptions)
