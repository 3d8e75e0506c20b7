"""Security headers on every response, a strict policy with a fresh nonce for GraphiQL, and
a Server header that names no versions, even on answers aiohttp makes itself."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from aiohttp import ClientResponse

from leaderboard.app import create_app
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.config import Settings
from leaderboard.headers import API_CSP
from tests.conftest import Api, _create, serving_on_loopback

EVERY_RESPONSE = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Server": "leaderboard",
}


def _assert_secured(response: ClientResponse, policy: str | None = API_CSP) -> None:
    for name, value in EVERY_RESPONSE.items():
        assert response.headers.get(name) == value, (name, dict(response.headers))
    if policy is not None:
        assert response.headers["Content-Security-Policy"] == policy


async def test_api_answers_carry_the_headers(api: Api) -> None:
    response = await api.http.post("/graphql", json={"query": "{ __typename }"})
    assert response.status == 200
    _assert_secured(response)
    assert response.headers["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/healthz", 200),
        ("GET", "/graphiql/assets/graphiql.min.css", 200),
        ("GET", "/graphiql/assets/nothing.js", 404),
        ("GET", "/nowhere", 404),
        ("DELETE", "/graphql", 405),
        ("GET", "/graphql?query=%7B", 200),
        ("POST", "/graphql", 400),
    ],
)
async def test_every_answer_carries_the_headers(
    api: Api, method: str, path: str, status: int
) -> None:
    response = await api.http.request(method, path, headers={"Accept": "application/json"})
    assert response.status == status
    _assert_secured(response)


async def test_a_refused_oversized_body_carries_the_headers(api: Api) -> None:
    response = await api.http.post(
        "/graphql", data=io.BytesIO(b"x" * (2 << 20)), headers={"Content-Type": "application/json"}
    )
    assert response.status == 413
    _assert_secured(response)


NONCE = re.compile(r"'nonce-([A-Za-z0-9_-]{22})'")


async def test_graphiql_has_a_strict_policy_with_a_fresh_nonce(api: Api) -> None:
    nonces = []
    for _ in range(2):
        response = await api.http.get("/graphql", headers={"Accept": "text/html"})
        assert response.status == 200
        page = await response.text()
        assert "<title>Leaderboard GraphQL</title>" in page
        _assert_secured(response, policy=None)
        policy = response.headers["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        (nonce,) = set(NONCE.findall(policy))
        assert directives == {
            "default-src": "'none'",
            "script-src": f"'self' 'nonce-{nonce}'",
            "style-src": f"'self' 'nonce-{nonce}'",
            "connect-src": "'self'",
            "img-src": "'self' data:",
            "font-src": "'self' data:",
            "base-uri": "'none'",
            "form-action": "'none'",
            "frame-ancestors": "'none'",
        }
        # The inline script and style carry it; the scripts loaded by src come from 'self'.
        assert page.count(f'nonce="{nonce}"') == 2
        assert re.findall(r"<script(?: [^>]*)?>", page) == [
            '<script src="/graphiql/assets/react.production.min.js">',
            '<script src="/graphiql/assets/react-dom.production.min.js">',
            '<script src="/graphiql/assets/graphiql.min.js">',
            f'<script nonce="{nonce}">',
        ]
        nonces.append(nonce)
    assert nonces[0] != nonces[1]


@pytest.fixture
async def address(settings: Settings, graphiql_assets: Path) -> AsyncIterator[tuple[str, int]]:
    app = create_app(
        settings,
        graphiql_assets=graphiql_assets,
        prepare=_create,
        credentials=LOCAL_CREDENTIALS,
    )
    async with serving_on_loopback(app) as url:
        parts = urlsplit(url)
        assert parts.hostname is not None
        assert parts.port is not None
        yield parts.hostname, parts.port


async def _exchange(address: tuple[str, int], request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(*address)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    finally:
        writer.close()


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"BROKEN\r\n\r\n",
        b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 20000 + b"\r\n\r\n",
        b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n",
    ],
)
async def test_answers_aiohttp_makes_itself_name_no_versions(
    address: tuple[str, int], request_bytes: bytes
) -> None:
    head = await _exchange(address, request_bytes)
    assert re.match(rb"HTTP/1\.[01] 4\d\d ", head), head
    servers = [line for line in head.split(b"\r\n") if line.lower().startswith(b"server:")]
    assert servers == [b"Server: leaderboard"], head
    assert b"aiohttp" not in head.lower()
    assert b"python" not in head.lower()


async def test_a_served_answer_names_no_versions_on_the_wire(address: tuple[str, int]) -> None:
    head = await _exchange(address, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), head
    assert b"\r\nServer: leaderboard\r\n" in head
    assert b"aiohttp" not in head.lower()
