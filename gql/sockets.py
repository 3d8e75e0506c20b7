"""The process's WebSockets and subscriptions, counted against their limits.

A socket is counted from its upgrade request to its close, a subscription from its
``subscribe`` message to its end. Past a limit the socket is refused before its upgrade, and
the subscription with an error message on its socket; nothing else is affected.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from dynamo.errors import ErrorCode, LeaderboardError
from gql.recording import Recorder, Unrecorded

__all__ = ["SocketLimits", "Sockets"]


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
