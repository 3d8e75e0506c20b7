"""One endpoint's HTTP/1.1 connections, kept open between requests: what the direct calls
(dynamo/direct.py) are sent over.

A request through a general HTTP client costs about 300 us of CPU here before a byte is sent
or read (its request and response objects, its URL and cookie handling, its tracing signals,
its connector's bookkeeping), where the exchange itself (one write, one or two reads, the
answer's head parsed) costs a small part of that. DynamoDB's API needs little of what such a
client does: one ``POST /`` to one endpoint, a body of known length, an answer framed by
``Content-Length`` (or chunked, which is read too). :class:`Transport` does that much, on
the event loop's own transports and protocols:

- at most ``limit`` connections at once (the client's ``max_pool_connections``); a request
  waits for one beyond that;
- a connection is reused after a complete answer that leaves it open (HTTP/1.1, no
  ``Connection: close``, a framed body, nothing read past it), most recently used first,
  and dropped once idle ``idle_timeout`` seconds or once the other end has closed it;
- ``connect_timeout`` bounds opening a connection (TLS included, for ``https``);
  ``read_timeout`` bounds each wait for the answer's next bytes, as a socket's read timeout
  does;
- a failure is raised as botocore's own exception for it, so that the client's retry policy
  judges it as it judges the client's own calls: :class:`ConnectTimeoutError`,
  :class:`NotConnected` (an :class:`EndpointConnectionError`: no connection could be opened,
  so nothing of the request was sent), :class:`SSLError` (a certificate that does not
  verify), :class:`ReadTimeoutError`,
  :class:`ConnectionClosedError` (the connection closed before the whole answer came, or an
  answer that is not HTTP/1.x). A connection whose exchange failed, or was cancelled, is
  closed: it is never reused with an answer half read.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)

__all__ = ["IDLE_TIMEOUT", "Answer", "NotConnected", "Transport"]

IDLE_TIMEOUT = 15.0
"""Seconds a connection is kept idle before it is closed rather than reused (an idle
connection may meanwhile have been closed by the other end)."""
_HEAD_END = b"\r\n\r\n"
_MAX_HEAD = 64 * 1024
"""Bytes an answer's head may take at most."""


class NotConnected(EndpointConnectionError):
    """No connection to the endpoint could be opened (refused, unreachable, no such host):
    the request was not sent, so a write it carried was certainly not applied."""


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: its status, its headers (names in lower case; a repeated header's
    values joined by ``", "``) and its whole body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Broken(Exception):
    """The exchange cannot go on: the connection closed, or the answer is not HTTP/1.x."""


class _Connection(asyncio.Protocol):
    """One connection: the bytes received and not yet taken, and a waiter for more."""

    def __init__(self, read_timeout: float | None) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._read_timeout = read_timeout
        self._data = bytearray()
        self._waiter: asyncio.Future[None] | None = None
        self._deadline: asyncio.Timeout | None = None

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports have asyncio.Transport's methods without deriving from it.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._data += data
        if self._deadline is not None and self._read_timeout is not None:
            self._deadline.reschedule(asyncio.get_running_loop().time() + self._read_timeout)
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._wake()

    # the exchange

    @property
    def pending(self) -> bool:
        """Whether bytes came that no exchange has taken (never so between answers)."""
        return bool(self._data)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _more(self) -> None:
        """Wait for more bytes; :class:`_Broken` once none can come."""
        if self.closed:
            raise _Broken("the connection closed before the whole answer came")
        waiter = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        try:
            await waiter
        finally:
            self._waiter = None

    async def exchange(self, request: bytes) -> tuple[Answer, bool]:
        """Send ``request`` and read its answer: the answer, and whether the connection may
        carry another request."""
        assert self.transport is not None
        self._data.clear()
        self.transport.write(request)
        async with asyncio.timeout(None) as deadline:
            if self._read_timeout is not None:
                deadline.reschedule(asyncio.get_running_loop().time() + self._read_timeout)
                self._deadline = deadline
            try:
                return await self._answer()
            finally:
                self._deadline = None

    async def _answer(self) -> tuple[Answer, bool]:
        while True:
            version, status, headers = await self._head()
            if not 100 <= status < 200:
                break
        length = headers.get("content-length")
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        if chunked:
            body = await self._chunked()
        elif length is not None:
            body = await self._exactly(_length(length))
        else:
            body = await self._until_closed()
        reusable = (
            version == "HTTP/1.1"
            and (chunked or length is not None)
            and "close" not in headers.get("connection", "").lower()
            and not self._data
            and not self.closed
        )
        return Answer(status, headers, body), reusable

    async def _head(self) -> tuple[str, int, dict[str, str]]:
        while (end := self._data.find(_HEAD_END)) < 0:
            if len(self._data) > _MAX_HEAD:
                raise _Broken("an answer's head longer than 64 KiB")
            await self._more()
        lines = bytes(self._data[:end]).decode("latin-1").split("\r\n")
        del self._data[: end + len(_HEAD_END)]
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise _Broken(f"not an HTTP/1.x answer: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                raise _Broken(f"a malformed header line: {line[:80]!r}")
            name = name.strip().lower()
            value = value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return version, int(code), headers

    async def _exactly(self, size: int) -> bytes:
        while len(self._data) < size:
            await self._more()
        body = bytes(self._data[:size])
        del self._data[:size]
        return body

    async def _line(self) -> bytes:
        while (end := self._data.find(b"\r\n")) < 0:
            if len(self._data) > _MAX_HEAD:
                raise _Broken("a chunk's size line longer than 64 KiB")
            await self._more()
        line = bytes(self._data[:end])
        del self._data[: end + 2]
        return line

    async def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size_text = (await self._line()).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise _Broken(f"a malformed chunk size: {size_text[:20]!r}") from None
            if size == 0:
                while await self._line():  # the trailer's fields, up to its empty line
                    pass
                return b"".join(parts)
            parts.append(await self._exactly(size))
            if await self._exactly(2) != b"\r\n":
                raise _Broken("a chunk not followed by CRLF")

    async def _until_closed(self) -> bytes:
        while not self.closed:
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                self._waiter = None
        body = bytes(self._data)
        self._data.clear()
        return body


def _length(value: str) -> int:
    if not value.isdigit():
        raise _Broken(f"a malformed Content-Length: {value[:20]!r}")
    return int(value)


class Transport:
    """``POST /`` to the endpoint ``url`` over kept connections (see the module's
    docstring)."""

    def __init__(
        self,
        url: str,
        *,
        limit: int = 10,
        connect_timeout: float | None = 60.0,
        read_timeout: float | None = 60.0,
        idle_timeout: float = IDLE_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        split = urlsplit(url)
        self.url = url
        self._host = split.hostname or "localhost"
        self._tls = split.scheme == "https"
        self._port = split.port or (443 if self._tls else 80)
        self._ssl = (ssl_context or ssl.create_default_context()) if self._tls else None
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._idle_timeout = idle_timeout
        self._slots = asyncio.Semaphore(limit)
        self._idle: list[_Connection] = []
        self._closed = False
        self.opened = 0
        """Connections opened so far."""

    async def post(self, headers: Mapping[str, str], body: bytes) -> Answer:
        """The answer to ``POST /`` with ``headers`` (``content-length`` is added) and
        ``body``."""
        if self._closed:
            raise ConnectionClosedError(endpoint_url=self.url, error="the transport is closed")
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = (
            f"POST / HTTP/1.1\r\n{head}content-length: {len(body)}\r\n\r\n".encode("latin-1") + body
        )
        async with self._slots:
            connection = self._reuse() or await self._open()
            try:
                answer, reusable = await connection.exchange(request)
            except _Broken as error:
                connection.close()
                raise ConnectionClosedError(endpoint_url=self.url, error=error) from error
            except TimeoutError as error:
                connection.close()
                raise ReadTimeoutError(endpoint_url=self.url, error=error) from error
            except BaseException:
                connection.close()
                raise
            if reusable and not self._closed:
                connection.idle_since = time.monotonic()
                self._idle.append(connection)
            else:
                connection.close()
            return answer

    def _reuse(self) -> _Connection | None:
        """The most recently used idle connection still open, closing those too old."""
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if (
                not connection.closed
                and not connection.pending
                and now - connection.idle_since < self._idle_timeout
            ):
                return connection
            connection.close()
        return None

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        read_timeout = self._read_timeout
        try:
            async with asyncio.timeout(self._connect_timeout):
                _, connection = await loop.create_connection(
                    lambda: _Connection(read_timeout),
                    self._host,
                    self._port,
                    ssl=self._ssl,
                    server_hostname=self._host if self._tls else None,
                )
        except TimeoutError as error:
            raise ConnectTimeoutError(endpoint_url=self.url, error=error) from error
        except ssl.SSLError as error:
            raise SSLError(endpoint_url=self.url, error=error) from error
        except OSError as error:
            raise NotConnected(endpoint_url=self.url, error=error) from error
        self.opened += 1
        return connection

    @property
    def idle(self) -> int:
        """Connections open and idle now."""
        return sum(1 for c in self._idle if not c.closed)

    async def close(self) -> None:
        """Close the idle connections; those in use close once their exchange ends."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
