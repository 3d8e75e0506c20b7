"""Raw HTTP for the fuzz tests: requests written byte for byte on a socket, so that bodies,
headers and query strings reach the service exactly as generated."""

from __future__ import annotations

import asyncio
import contextlib

from tests.conftest import WAIT, Api
from tests.fuzz.answers import Reply


async def raw_http(api: Api, request: bytes) -> Reply:
    """Send ``request`` byte for byte on a fresh connection and read the whole answer."""
    server = api.http.server
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        writer.write(request)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=WAIT)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines[1:])
    }
    return Reply(
        status=status,
        content_type=headers.get("content-type", "").split(";")[0].strip().lower(),
        text=body.decode("utf-8", "replace"),
        request_id=headers.get("x-request-id"),
    )


def http_request(
    method: str, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes = b""
) -> bytes:
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: fuzz", b"Connection: close"]
    lines += [name + b": " + value for name, value in headers]
    if body or method not in ("GET", "HEAD"):
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body
