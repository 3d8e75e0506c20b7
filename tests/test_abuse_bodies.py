"""Slow and aborted request bodies: a slow body is answered 408 and closed at the body
timeout, a slow request head is closed at the head timeout, an aborted body is one log line
and no traceback, and an oversized body is refused without being read."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import pytest
from aiohttp import web

from leaderboard.app import create_app, server_options
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.config import Settings
from leaderboard.observability import quiet_malformed_requests
from tests.conftest import _create

BODY_TIMEOUT = 1.0
HEAD_TIMEOUT = 1.0
SLACK = 5.0
"""Seconds beyond a timeout a closed connection may take to be noticed, on a loaded machine."""


@asynccontextmanager
async def _served(settings: Settings, *, short: bool) -> AsyncIterator[tuple[str, int]]:
    """The service on a loopback port, with a 64 KB limit on bodies; with ``short``, the
    body and head timeouts of 1 s, else the defaults (10 and 15 s)."""
    limits = replace(settings.limits, max_body_bytes=64 * 1024)
    if short:
        limits = replace(limits, body_timeout=BODY_TIMEOUT, head_timeout=HEAD_TIMEOUT)
    app = create_app(
        replace(settings, limits=limits), prepare=_create, credentials=LOCAL_CREDENTIALS
    )
    # Served as the command line serves it: with the server's own bounds.
    runner = web.AppRunner(app, **server_options(limits))
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        yield host, port
    finally:
        await runner.cleanup()


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[tuple[str, int]]:
    """For the tests of the body and head timeouts: the short ones."""
    async with _served(settings, short=True) as address:
        yield address


@pytest.fixture
async def patient_server(settings: Settings) -> AsyncIterator[tuple[str, int]]:
    """For the other tests: the default timeouts, which their requests never come near
    (the aborted body's abort must come before its timeout, however slow the machine)."""
    async with _served(settings, short=False) as address:
        yield address


def _head(length: int, extra: str = "") -> bytes:
    return (
        "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    ).encode()


async def _read_all(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    try:
        while chunk := await reader.read(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        # Closed with bytes of the client's still unread: a reset after the answer.
        pass
    return b"".join(chunks)


async def _drip(writer: asyncio.StreamWriter, data: bytes, every: float) -> None:
    """Send ``data`` a byte at a time, until the server closes the connection."""
    try:
        for byte in data:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(every)
    except (ConnectionError, OSError):
        return


async def _slow_body(host: str, port: int) -> tuple[bytes, float]:
    """Declare a 1 MB body (under the limit here: 60 KB), send a byte a second; the answer and
    how long the server held the connection."""
    reader, writer = await asyncio.open_connection(host, port)
    loop = asyncio.get_running_loop()
    started = loop.time()
    writer.write(_head(60 * 1024))
    await writer.drain()
    dripping = asyncio.create_task(_drip(writer, b"{" + b" " * 60000, every=1.0))
    try:
        answer = await asyncio.wait_for(_read_all(reader), BODY_TIMEOUT + SLACK + 10)
        return answer, loop.time() - started
    finally:
        dripping.cancel()
        writer.close()


async def _query(host: str, port: int) -> bytes:
    reader, writer = await asyncio.open_connection(host, port)
    body = json.dumps({"query": "{ __typename }"}).encode()
    writer.write(_head(len(body), "Connection: close\r\n") + body)
    await writer.drain()
    try:
        return await asyncio.wait_for(_read_all(reader), 30)
    finally:
        writer.close()


async def test_a_slow_body_is_answered_408_and_closed(server: tuple[str, int]) -> None:
    answer, held = await _slow_body(*server)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"the request body took too long to arrive" in answer
    assert held < BODY_TIMEOUT + SLACK


async def test_many_slow_bodies_are_all_closed_while_queries_answer(
    server: tuple[str, int],
) -> None:
    slow = [asyncio.create_task(_slow_body(*server)) for _ in range(50)]
    await asyncio.sleep(0.2)
    answer = await _query(*server)
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    assert b'{"data":{"__typename":"Query"}' in answer
    results = await asyncio.gather(*slow)
    assert all(a.startswith(b"HTTP/1.1 408 ") for a, _ in results)


async def test_a_slow_request_head_is_closed(server: tuple[str, int]) -> None:
    reader, writer = await asyncio.open_connection(*server)
    loop = asyncio.get_running_loop()
    started = loop.time()
    dripping = asyncio.create_task(_drip(writer, _head(10) + b"X-Pad: " + b"a" * 1000, every=0.5))
    try:
        answer = await asyncio.wait_for(_read_all(reader), HEAD_TIMEOUT + SLACK + 10)
    finally:
        dripping.cancel()
        writer.close()
    assert loop.time() - started < HEAD_TIMEOUT + SLACK
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408 "), answer


async def test_a_keep_alive_connection_serves_requests_then_closes_when_idle(
    server: tuple[str, int],
) -> None:
    reader, writer = await asyncio.open_connection(*server)
    body = json.dumps({"query": "{ __typename }"}).encode()
    try:
        for _ in range(2):
            writer.write(_head(len(body)) + body)
            await writer.drain()
            status = await asyncio.wait_for(reader.readuntil(b"\r\n"), 30)
            assert status.startswith(b"HTTP/1.1 200 "), status
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            await reader.readexactly(length)
        # Idle past the head timeout: closed by the server.
        assert await asyncio.wait_for(reader.read(), HEAD_TIMEOUT + SLACK + 10) == b""
    finally:
        writer.close()


async def test_an_aborted_body_is_one_log_line_and_no_traceback(
    patient_server: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    server = patient_server
    caplog.set_level(logging.DEBUG)
    _, writer = await asyncio.open_connection(*server)
    writer.write(_head(60 * 1024, "X-Request-Id: aborted-1\r\n") + b'{"query": "' + b" " * 89)
    await writer.drain()
    await asyncio.sleep(0.3)
    writer.transport.abort()
    await asyncio.sleep(1.0)
    # A later request on another connection is served (and flushes any pending log).
    assert (await _query(*server)).startswith(b"HTTP/1.1 200 ")
    mine = [r for r in caplog.records if getattr(r, "requestId", None) == "aborted-1"]
    assert [(r.name, r.getMessage(), getattr(r, "status", None)) for r in mine] == [
        ("leaderboard.access", "request", 499)
    ]
    assert not [r for r in caplog.records if r.exc_info], [
        r.getMessage() for r in caplog.records if r.exc_info
    ]
    assert "Traceback" not in caplog.text


async def test_an_oversized_body_is_413_without_being_read(
    patient_server: tuple[str, int],
) -> None:
    reader, writer = await asyncio.open_connection(*patient_server)
    try:
        writer.write(_head(10 * 1024 * 1024) + b"{" + b" " * 70 * 1024)
        await writer.drain()
        # The rest of the 10 MB is never sent: the answer comes all the same.
        status = await asyncio.wait_for(reader.readuntil(b"\r\n"), 30)
    finally:
        writer.close()
    assert status.startswith(b"HTTP/1.1 413 "), status


async def test_a_malformed_request_is_one_warning_line_without_traceback(
    patient_server: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    quiet_malformed_requests()
    caplog.set_level(logging.DEBUG)
    reader, writer = await asyncio.open_connection(*patient_server)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
    await writer.drain()
    answer = await asyncio.wait_for(_read_all(reader), 30)
    writer.close()
    assert answer.startswith(b"HTTP/1.0 400 "), answer
    assert not [r for r in caplog.records if r.exc_info]
    assert "Traceback" not in caplog.text
    server_lines = [r for r in caplog.records if r.name == "aiohttp.server"]
    assert [(r.levelname, r.getMessage()) for r in server_lines] == [
        (
            "WARNING",
            "malformed request from 127.0.0.1: Invalid header token: b'Bad Header' ^",
        )
    ]
