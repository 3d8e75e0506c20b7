"""dynamo/transport.py against a scripted HTTP server on loopback: connections kept and
reused, answers however framed, and every failure raised as botocore's exception for it,
with the connection closed.

Each test runs on the standard library's loop and on uvloop's (conftest.py). The server
answers each request it reads with the next step of its script (a function of
the connection's writer), and counts the connections it accepted and those open at once.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from botocore.exceptions import (
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)

from dynamo.transport import Transport

Step = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def answer(body: bytes = b"{}", *, status: str = "200 OK", extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"x-amzn-RequestId: r1\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def sends(*chunks: bytes, close: bool = False) -> Step:
    async def step(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for chunk in chunks:
            writer.write(chunk)
        await writer.drain()
        if close:
            writer.close()

    return step


def never() -> Step:
    """No answer: the connection is held until the client closes it."""

    async def step(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    return step


class Server:
    """A loopback HTTP/1.1 server that answers requests by its script, in order; once the
    script is spent, with :func:`answer`."""

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.accepted = 0
        self.open = 0
        self.most_open = 0
        self.requests: list[bytes] = []
        self.closed_by_client = 0
        self._server: asyncio.Server | None = None
        self.port = 0
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self, context: ssl.SSLContext | None = None) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        for writer in self.writers:
            writer.close()
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                self.requests.append(head + await reader.readexactly(length))
                step = self.script.pop(0) if self.script else sends(answer())
                await step(reader, writer)
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed_by_client += 1
        finally:
            self.open -= 1
            writer.close()


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    running = Server()
    await running.start()
    yield running
    await running.stop()


def transport(server: Server, **options: float) -> Transport:
    return Transport(f"http://127.0.0.1:{server.port}/", **options)  # type: ignore[arg-type]


HEADERS = {"host": "127.0.0.1", "x-amz-target": "DynamoDB_20120810.Query"}


async def test_an_answer_comes_with_its_status_headers_and_body(server: Server) -> None:
    server.script = [sends(answer(b'{"Count":1}', status="400 Bad Request", extra="A: 1\r\n"))]
    through = transport(server)
    got = await through.post(HEADERS, b'{"TableName":"t"}')
    assert (got.status, got.body) == (400, b'{"Count":1}')
    assert got.headers["x-amzn-requestid"] == "r1"
    assert got.headers["a"] == "1"
    sent = server.requests[0]
    assert sent.startswith(b"POST / HTTP/1.1\r\n")
    assert b"x-amz-target: DynamoDB_20120810.Query\r\n" in sent
    assert sent.endswith(b'content-length: 17\r\n\r\n{"TableName":"t"}')
    await through.close()


async def test_requests_one_after_another_share_one_connection(server: Server) -> None:
    through = transport(server)
    for n in range(20):
        server.script = [sends(answer(b'{"n":%d}' % n))]
        assert (await through.post(HEADERS, b"{}")).body == b'{"n":%d}' % n
    assert (server.accepted, through.opened, through.idle) == (1, 1, 1)
    await through.close()


async def test_requests_at_once_open_at_most_the_limit(server: Server) -> None:
    through = transport(server, limit=3)
    got = await asyncio.gather(*(through.post(HEADERS, b"{}") for _ in range(12)))
    assert [a.status for a in got] == [200] * 12
    assert server.most_open <= 3
    assert through.opened == server.accepted <= 3
    await through.close()


async def test_a_chunked_answer_is_read_whole_and_its_connection_kept(server: Server) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'5;ext=1\r\n{"a":\r\n3\r\n 1}\r\n0\r\nTrailer: x\r\n\r\n'
    )
    server.script = [sends(chunked[:30], chunked[30:])]
    through = transport(server)
    assert (await through.post(HEADERS, b"{}")).body == b'{"a": 1}'
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert server.accepted == 1
    await through.close()


async def test_an_answer_read_to_its_close_is_whole_and_its_connection_not_kept(
    server: Server,
) -> None:
    server.script = [sends(b"HTTP/1.0 200 OK\r\n\r\n", b'{"all":', b"true}", close=True)]
    through = transport(server)
    assert (await through.post(HEADERS, b"{}")).body == b'{"all":true}'
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert server.accepted == 2
    await through.close()


async def test_connection_close_is_honoured(server: Server) -> None:
    server.script = [sends(answer(extra="Connection: close\r\n"))]
    through = transport(server)
    await through.post(HEADERS, b"{}")
    assert through.idle == 0
    await through.post(HEADERS, b"{}")
    assert server.accepted == 2
    await through.close()


async def test_a_connection_closed_while_idle_is_replaced(server: Server) -> None:
    through = transport(server)
    await through.post(HEADERS, b"{}")
    server.writers[0].close()
    while through.idle:  # noqa: ASYNC110 - the close reaching the client, not an event
        await asyncio.sleep(0.01)
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert server.accepted == 2
    await through.close()


async def test_a_connection_idle_too_long_is_not_reused(server: Server) -> None:
    through = transport(server, idle_timeout=0.0)
    await through.post(HEADERS, b"{}")
    await through.post(HEADERS, b"{}")
    assert server.accepted == 2
    await through.close()


async def test_an_answer_cut_short_fails_as_a_closed_connection(server: Server) -> None:
    whole = answer(b'{"Items":[1,2,3]}')
    server.script = [sends(whole[:-5], close=True)]
    through = transport(server)
    with pytest.raises(ConnectionClosedError) as caught:
        await through.post(HEADERS, b"{}")
    assert f"127.0.0.1:{server.port}" in str(caught.value)
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert server.accepted == 2
    await through.close()


@pytest.mark.parametrize(
    "garbage",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 2xx OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
async def test_an_answer_that_is_not_http_fails_and_its_connection_is_closed(
    server: Server, garbage: bytes
) -> None:
    server.script = [sends(garbage)]
    through = transport(server)
    with pytest.raises(ConnectionClosedError):
        await through.post(HEADERS, b"{}")
    assert through.idle == 0
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert server.accepted == 2
    await through.close()


async def test_an_answer_that_never_comes_meets_the_read_timeout(server: Server) -> None:
    server.script = [never()]
    through = transport(server, read_timeout=0.2)
    with pytest.raises(ReadTimeoutError):
        await through.post(HEADERS, b"{}")
    # The timed-out connection is closed, not kept.
    while server.closed_by_client < 1:  # noqa: ASYNC110 - a count of the server's
        await asyncio.sleep(0.01)
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert server.accepted == 2
    await through.close()


async def test_the_read_timeout_bounds_each_wait_not_the_whole_answer(server: Server) -> None:
    """Four pieces a second apart: the answer takes three seconds, each wait one, under the
    timeout of two and a half."""
    whole = answer(b'{"Items":["' + b"x" * 40 + b'"]}')

    async def slowly(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for n in range(4):
            if n:
                await asyncio.sleep(1.0)
            writer.write(whole[n * len(whole) // 4 : (n + 1) * len(whole) // 4])
            await writer.drain()

    server.script = [slowly]
    through = transport(server, read_timeout=2.5)
    assert (await through.post(HEADERS, b"{}")).body == whole.partition(b"\r\n\r\n")[2]
    await through.close()


async def test_a_cancelled_request_closes_its_connection(server: Server) -> None:
    server.script = [never()]
    through = transport(server)
    sent = asyncio.create_task(through.post(HEADERS, b"{}"))
    while not server.requests:  # noqa: ASYNC110 - the server's records, not an event
        await asyncio.sleep(0.01)
    sent.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sent
    assert through.idle == 0
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert server.accepted == 2
    await through.close()


async def test_a_refused_connection_fails_as_an_endpoint_connection_error() -> None:
    with socket.socket() as bound:  # bound, not listening: a connection is refused
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        through = Transport(f"http://127.0.0.1:{port}/")
        with pytest.raises(EndpointConnectionError) as caught:
            await through.post(HEADERS, b"{}")
    assert f'"http://127.0.0.1:{port}/"' in str(caught.value)


async def test_a_closed_transport_sends_nothing(server: Server) -> None:
    through = transport(server)
    await through.post(HEADERS, b"{}")
    await through.close()
    with pytest.raises(ConnectionClosedError):
        await through.post(HEADERS, b"{}")
    assert len(server.requests) == 1


# --- TLS -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture
async def tls_server(certificate: tuple[Path, Path]) -> AsyncIterator[Server]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    running = Server()
    await running.start(context)
    yield running
    await running.stop()


async def test_https_is_spoken_over_verified_tls(
    tls_server: Server, certificate: tuple[Path, Path]
) -> None:
    trusting = ssl.create_default_context(cafile=str(certificate[0]))
    through = Transport(f"https://127.0.0.1:{tls_server.port}/", ssl_context=trusting)
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert (await through.post(HEADERS, b"{}")).status == 200
    assert tls_server.accepted == 1
    await through.close()


async def test_a_certificate_that_does_not_verify_fails_as_botocore_s_ssl_error(
    tls_server: Server,
) -> None:
    through = Transport(f"https://127.0.0.1:{tls_server.port}/")
    with pytest.raises(SSLError):
        await through.post(HEADERS, b"{}")
    assert tls_server.requests == []
