"""What a process does once it is asked to stop, while its requests in flight finish.

The server has stopped listening by then (aiohttp closes its listening sockets and the idle
keep-alive connections first). Every answer from then on says ``Connection: close``, so that
no client sends a further request on a connection about to close, and every open WebSocket
is closed with 1001 (Going Away), so that its client reconnects elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import WSCloseCode, hdrs, web

from edge.sockets import Sockets

__all__ = ["GOING_AWAY", "SOCKET_CLOSE_WAIT", "add_drain"]

SOCKET_CLOSE_WAIT = 1.0
"""Seconds the WebSockets open when the process stops have to answer their close frame;
past it their connections are closed."""
GOING_AWAY = b"the server is shutting down"
"""The reason sent with the close code 1001."""


@dataclass
class _Drain:
    sockets: Sockets
    stopping: bool = False

    async def on_shutdown(self, _: web.Application) -> None:
        self.stopping = True
        await self.sockets.close_all(WSCloseCode.GOING_AWAY, GOING_AWAY, wait=SOCKET_CLOSE_WAIT)

    async def on_response_prepare(self, _: web.Request, response: web.StreamResponse) -> None:
        if self.stopping and not isinstance(response, web.WebSocketResponse):
            # The response's own headers are made by now: the header is set here as well.
            response.force_close()
            response.headers[hdrs.CONNECTION] = "close"


def add_drain(app: web.Application, sockets: Sockets) -> None:
    """Drain ``app`` as described above when it shuts down."""
    drain = _Drain(sockets)
    app.on_shutdown.append(drain.on_shutdown)
    app.on_response_prepare.append(drain.on_response_prepare)
