"""What bounds one caller's operations, on every transport, and who the caller is."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

from edge.admission import Admission
from edge.recording import Recorder, Unrecorded
from edge.sockets import Sockets
from edge.throttle import Allowances

__all__ = ["Guards", "client_address"]


@dataclass(frozen=True)
class Guards:
    """What bounds one operation of one caller, on every transport."""

    deadline: float = 10.0
    """Seconds an operation may run."""
    max_calls: int | None = None
    """Database calls one operation may make."""
    max_in_flight: int | None = None
    """Database calls of one operation under way at once."""
    body_timeout: float = 10.0
    """Seconds a client may take to send a request's body."""
    admission: Admission = field(
        default_factory=lambda: Admission(max_concurrent=32, queue_timeout=5.0, capacity=2000)
    )
    """The process's bound on operations running at once."""
    allowances: Allowances | None = None
    """Anonymous callers' allowances of cost points."""
    trusted_proxy_hops: int = 0
    """Proxies in front of the service that append to X-Forwarded-For."""
    sockets: Sockets = field(default_factory=Sockets)
    """The process's WebSockets and subscriptions, and their limits."""
    recorder: Recorder = field(default_factory=Unrecorded)
    """Told of every operation's end: its transport, name, outcome and duration."""


def client_address(request: web.BaseRequest, trusted_proxy_hops: int) -> str:
    """The caller's address: the peer's, or, behind ``trusted_proxy_hops`` proxies that each
    append the address they saw to X-Forwarded-For, the entry that many hops from the right
    (what the outermost trusted proxy saw; anything left of it the client could have made up)."""
    if trusted_proxy_hops > 0:
        hops = [
            hop.strip()
            for header in request.headers.getall("X-Forwarded-For", [])
            for hop in header.split(",")
            if hop.strip()
        ]
        if len(hops) >= trusted_proxy_hops:
            return hops[-trusted_proxy_hops]
    return request.remote or ""
