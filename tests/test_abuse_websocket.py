"""Abuse over WebSocket: the same bounds as over HTTP (cost, deadline, calls, error codes with
a request id), and bounded sockets, subscriptions, handshakes and send queues."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket as stdlib_socket
import sys
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientWebSocketResponse, WSMsgType, WSServerHandshakeError

from edge.app_keys import BROKER
from faultproxy import Fault, FaultProxy, Rule
from leaderboard.app import SOCKETS
from leaderboard.config import Settings
from tests.conftest import API_KEYS, WAIT, Api, _serve

PROTOCOL = ("graphql-transport-ws",)
WATCH = """subscription($b: ID!) { leaderboardChanged(leaderboardId: $b, first: 3) {
    entries { rank score player { id } } } }"""
ENTRIES = """topScores(first: 100) { edges { node { score rank player { name
    scores(first: 100) { edges { node { score } } }
    sessions(first: 100) { edges { node { score } } } } } } }"""
AMPLIFIED = "{ " + " ".join(f'a{n}: leaderboard(id: "b") {{ {ENTRIES} }}' for n in range(40)) + " }"
"""The amplification document: 40 aliased pages of 100 players with their lists (8 KB)."""
COSTLY = (
    '{ a: leaderboard(id: "b") { '
    + ENTRIES
    + ' } b: leaderboard(id: "b") { '
    + ENTRIES
    + (' } c: leaderboard(id: "b") { ' + ENTRIES + " } }")
)
"""Within the document limits, over the cost limit (3 x 402 points)."""


@asynccontextmanager
async def socket(
    api: Api, *, address: str | None = None, init: bool = True
) -> AsyncIterator[ClientWebSocketResponse]:
    headers = {"X-Forwarded-For": address} if address else None
    async with api.http.ws_connect("/graphql", protocols=PROTOCOL, headers=headers) as ws:
        if init:
            await ws.send_json({"type": "connection_init"})
            assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        yield ws


async def subscribe(
    ws: ClientWebSocketResponse, id_: str, query: str, variables: dict[str, Any] | None = None
) -> None:
    payload: dict[str, Any] = {"query": query}
    if variables is not None:
        payload["variables"] = variables
    await ws.send_json({"id": id_, "type": "subscribe", "payload": payload})


async def receive(ws: ClientWebSocketResponse) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=WAIT)
    return message


async def closed(ws: ClientWebSocketResponse) -> tuple[int | None, str]:
    """The close code and reason the server ended the socket with."""
    message = await ws.receive(timeout=WAIT)
    assert message.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.CLOSING), message
    return ws.close_code, str(message.extra or "")


@pytest.fixture
async def tight(settings: Settings) -> AsyncIterator[Api]:
    """A service with small WebSocket limits, behind one trusted proxy (so that tests can
    speak from several addresses)."""
    limits = replace(
        settings.limits,
        max_websockets=3,
        max_websockets_per_client=2,
        max_subscriptions=3,
        max_subscriptions_per_socket=2,
        trusted_proxy_hops=1,
    )
    async with _serve(replace(settings, limits=limits), None) as api:
        await api.create_board("b")
        yield api


async def test_the_amplification_query_is_refused_over_websocket_with_zero_calls(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    await api.create_board("b")
    api.reset_calls()
    async with socket(api) as ws:
        for id_, query, code in (
            ("1", AMPLIFIED, "TOKEN_LIMIT_EXCEEDED"),
            ("2", COSTLY, "COST_LIMIT_EXCEEDED"),
            ("3", "subscription { " + COSTLY[2:], "GRAPHQL_VALIDATION_FAILED"),
        ):
            await subscribe(ws, id_, query)
            message = await receive(ws)
            assert (message["id"], message["type"]) == (id_, "error")
            assert {e["extensions"]["code"] for e in message["payload"]} == {code}
            assert all(len(e["extensions"]["requestId"]) == 32 for e in message["payload"])
        # The socket stays usable.
        await subscribe(ws, "4", "{ __typename }")
        payload = (await receive(ws))["payload"]
        assert payload["data"] == {"__typename": "Query"}
        assert payload["extensions"]["cost"]["requestedQueryCost"] == 0
    assert api.calls == {}
    # No log line holds the document.
    assert not [r for r in caplog.records if "topScores" in r.getMessage()]


async def test_subscription_cost_is_limited_before_it_runs(api: Api) -> None:
    await api.create_board("b")
    api.reset_calls()
    async with socket(api) as ws:
        heavy = (
            'subscription { leaderboardChanged(leaderboardId: "b", first: 100) { entries {'
            " player { scores(first: 100) { edges { node { leaderboard { name } } } } } } } }"
        )
        await subscribe(ws, "1", heavy)
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "COST_LIMIT_EXCEEDED"
    assert api.calls == {}


async def test_errors_are_classified_with_a_request_id(api: Api) -> None:
    async with socket(api) as ws:
        await subscribe(ws, "1", WATCH, {"b": "nope"})
        message = await receive(ws)
        assert message["type"] in ("next", "error")
        errors = message["payload"]["errors"] if message["type"] == "next" else message["payload"]
        [error] = errors
        assert error["extensions"]["code"] == "LEADERBOARD_NOT_FOUND"
        assert len(error["extensions"]["requestId"]) == 32
        if message["type"] == "next":
            assert (await receive(ws))["type"] == "complete"
        await subscribe(ws, "2", '{ player(id: "a#b") { id } }')
        message = await receive(ws)
        [error] = message["payload"]["errors"]
        assert error["extensions"]["code"] == "INVALID_ID"
        assert error["extensions"]["requestId"] != errors[0]["extensions"]["requestId"]


async def test_a_query_over_websocket_has_the_request_deadline(
    api: Api, settings: Settings, proxy: FaultProxy
) -> None:
    await api.create_player("p")  # set up by the patient service, on the same table
    limits = replace(settings.limits, request_deadline=1.0)
    async with _serve(replace(settings, endpoint_url=proxy.url, limits=limits), None) as hasty:
        proxy.inject(Rule(Fault.DELAY, delay=0.7))
        deep = """{ player(id: "p") { sessions(first: 1) { edges { node { id } } }
            scores(first: 1) { edges { node { leaderboard { name } } } } } }"""
        async with socket(hasty) as ws:
            await subscribe(ws, "1", "query Deep " + deep)
            message = await receive(ws)
            assert message["type"] == "error", message
            [error] = message["payload"]
            assert error["extensions"]["code"] == "BACKEND_UNAVAILABLE"
            assert "ran out of time" in error["message"]
            sent = sum(proxy.received.values())
            await asyncio.sleep(1.0)
            assert sum(proxy.received.values()) == sent
        proxy.clear()


async def test_each_push_of_a_subscription_has_its_own_call_budget(settings: Settings) -> None:
    # Four calls per operation: the first push reads the board, its top and their players;
    # each later push its top and players. Over ten pushes that is far more than four.
    limits = replace(settings.limits, max_dynamodb_calls=4)
    async with _serve(replace(settings, limits=limits), None) as api:
        await api.create_board("b")
        async with socket(api) as ws:
            await subscribe(ws, "1", WATCH, {"b": "b"})
            assert (await receive(ws))["payload"]["data"]["leaderboardChanged"]["entries"] == []
            for n in range(10):
                await api.create_player(f"p{n}")
                await api.submit(f"p{n}", "b", 100 + n)
                message = await receive(ws)
                assert "errors" not in message["payload"], message
                top = message["payload"]["data"]["leaderboardChanged"]["entries"]
                assert top[0] == {"rank": 1, "score": 100 + n, "player": {"id": f"p{n}"}}


async def test_sockets_are_limited_per_client_and_per_process(tight: Api) -> None:
    sockets = tight.http.app[SOCKETS]
    async with AsyncExitStack() as stack:
        for _ in range(2):
            await stack.enter_async_context(socket(tight, address="10.0.0.1"))
        with pytest.raises(WSServerHandshakeError) as refused:
            await stack.enter_async_context(socket(tight, address="10.0.0.1"))
        assert refused.value.status == 429
        assert refused.value.headers is not None
        assert refused.value.headers["Retry-After"] == "1"
        await stack.enter_async_context(socket(tight, address="10.0.0.2"))
        assert sockets.open == 3
        with pytest.raises(WSServerHandshakeError) as refused:
            await stack.enter_async_context(socket(tight, address="10.0.0.3"))
        assert refused.value.status == 503
        # HTTP is not affected.
        assert (await tight.gql('{ leaderboard(id: "b") { id } }'))["leaderboard"] == {"id": "b"}
    await _settled(lambda: sockets.open == 0)
    async with socket(tight, address="10.0.0.1"), socket(tight, address="10.0.0.1"):
        assert sockets.open == 2


async def test_refused_upgrade_body_is_a_coded_error(tight: Api) -> None:
    async with socket(tight, address="10.0.0.9"), socket(tight, address="10.0.0.9"):
        response = await tight.http.get(
            "/graphql",
            headers={
                "Connection": "Upgrade",
                "Upgrade": "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                "Sec-WebSocket-Protocol": "graphql-transport-ws",
                "X-Forwarded-For": "10.0.0.9",
            },
        )
        assert response.status == 429
        [error] = (await response.json())["errors"]
        assert error["extensions"]["code"] == "THROTTLED"


async def test_subscriptions_are_limited_per_socket_and_per_process(tight: Api) -> None:
    sockets = tight.http.app[SOCKETS]
    broker = tight.http.app[BROKER]
    async with socket(tight, address="10.0.0.1") as one, socket(tight, address="10.0.0.2") as two:
        for id_ in ("1", "2"):
            await subscribe(one, id_, WATCH, {"b": "b"})
            assert (await receive(one))["type"] == "next"
        await subscribe(one, "3", WATCH, {"b": "b"})
        message = await receive(one)
        assert (message["id"], message["type"]) == ("3", "error")
        assert message["payload"][0]["extensions"]["code"] == "THROTTLED"
        # Completing one makes room on the socket.
        await one.send_json({"id": "1", "type": "complete"})
        await _settled(lambda: sockets.subscriptions == 1)
        await subscribe(one, "3", WATCH, {"b": "b"})
        assert (await receive(one))["type"] == "next"
        # The process runs three at most.
        await subscribe(two, "1", WATCH, {"b": "b"})
        assert (await receive(two))["type"] == "next"
        assert sockets.subscriptions == 3
        await subscribe(two, "2", WATCH, {"b": "b"})
        message = await receive(two)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "SERVICE_OVERLOADED"
        # Queries still run on the socket.
        await subscribe(two, "3", '{ leaderboard(id: "b") { id } }')
        assert (await receive(two))["payload"]["data"] == {"leaderboard": {"id": "b"}}
        assert broker.listening("b") == 3
    await _settled(lambda: sockets.subscriptions == 0 and sockets.open == 0)
    assert broker.listening("b") == 0


async def test_connection_init_has_a_timeout_and_the_legacy_protocol_is_refused(
    settings: Settings,
) -> None:
    # A short bound, on a service of its own: every other test's sockets have the default
    # (5 s) to send their connection_init in, which they do at once.
    limits = replace(settings.limits, connection_init_timeout=0.5)
    async with _serve(replace(settings, limits=limits), None) as api:
        async with socket(api, init=False) as ws:
            code, reason = await closed(ws)
            assert (code, reason) == (4408, "Connection initialisation timeout")
        async with api.http.ws_connect("/graphql", protocols=("graphql-ws",)) as ws:
            assert ws.protocol is None
            code, _ = await closed(ws)
            assert code == 4406
        await _settled(lambda: api.http.app[SOCKETS].open == 0)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ([], "Failed to parse message"),
        ({"type": 1}, "Failed to parse message"),
        ({"id": "1", "type": "subscribe", "payload": "x"}, "Invalid subscribe message"),
        (
            {"id": 1, "type": "subscribe", "payload": {"query": "{ a }"}},
            "Invalid subscribe message",
        ),
        (
            {"id": "1", "type": "subscribe", "payload": {"query": "{ a }", "variables": []}},
            "Invalid subscribe message",
        ),
        (
            {"id": "1", "type": "subscribe", "payload": {"query": "{ a }", "operationName": 2}},
            "Invalid subscribe message",
        ),
    ],
)
async def test_malformed_messages_close_the_socket_without_a_traceback(
    api: Api, caplog: pytest.LogCaptureFixture, message: object, reason: str
) -> None:
    async with socket(api) as ws:
        await ws.send_json(message)
        assert await closed(ws) == (4400, reason)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"type": "connection_init", "payload": {"x": "\\ud800"}}', "not valid Unicode"),
        ("[" * 100_000 + "]" * 100_000, "must be valid JSON"),
        ("not json", "must be valid JSON"),
    ],
)
async def test_unreadable_messages_close_the_socket(
    api: Api, caplog: pytest.LogCaptureFixture, raw: str, reason: str
) -> None:
    async with socket(api, init=False) as ws:
        await ws.send_str(raw)
        code, said = await closed(ws)
        assert code == 4400
        assert reason in said
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_oversized_messages_close_the_socket(settings: Settings) -> None:
    limits = replace(settings.limits, max_body_bytes=4096)
    async with _serve(replace(settings, limits=limits), None) as api, socket(api) as ws:
        await subscribe(ws, "1", "{ __typename " + " " * 5000 + "}")
        code, _ = await closed(ws)
        assert code == 1009


async def _settled(condition: Any, seconds: float = WAIT) -> None:
    """Wait for the server to notice closed sockets and ended operations."""
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 - counters of the server, not an event
            await asyncio.sleep(0.02)


def _frame(text: str) -> bytes:
    """A client's text frame (masked with a zero key, which leaves the payload as it is)."""
    payload = text.encode()
    size = len(payload)
    if size < 126:
        header = bytes([0x81, 0x80 | size])
    elif size < 1 << 16:
        header = bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
    else:
        header = bytes([0x81, 0x80 | 127]) + size.to_bytes(8, "big")
    return header + b"\0\0\0\0" + payload


async def _stalled_socket(
    api: Api, query: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket that subscribes, then never reads: its receive buffer is as small as the
    system allows."""
    sock = stdlib_socket.socket()
    sock.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_RCVBUF, 1024)
    sock.setblocking(False)
    server = api.http.server
    await asyncio.get_running_loop().sock_connect(sock, (server.host, server.port))
    reader, writer = await asyncio.open_connection(sock=sock)
    writer.write(
        b"GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n"
    )
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 101")
    writer.write(_frame(json.dumps({"type": "connection_init"})))
    assert b"connection_ack" in await reader.read(64)
    writer.write(_frame(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": query}})))
    await writer.drain()
    return reader, writer


@pytest.mark.parametrize(
    ("buffer", "send_timeout"),
    [
        pytest.param(1000, 60.0, id="unsent bytes past the buffer limit"),
        pytest.param(1 << 20, 1.0, id="a send waiting past the send timeout"),
    ],
)
async def test_a_consumer_that_stops_reading_is_dropped(
    settings: Settings, buffer: int, send_timeout: float
) -> None:
    limits = replace(
        settings.limits, max_socket_buffer_bytes=buffer, socket_send_timeout=send_timeout
    )
    async with _serve(replace(settings, limits=limits), None) as api:
        sockets = api.http.app[SOCKETS]
        await api.create_board("b")
        for n in range(30):
            await api.create_player(f"p{n:02}", "n" * 100)
            await api.submit(f"p{n:02}", "b", n)
        # Each push is about 130 KB: thirty entries with their player's name 39 times.
        names = " ".join(f"n{k}: name" for k in range(39))
        query = f"""subscription {{ leaderboardChanged(leaderboardId: "b", first: 30) {{
            entries {{ rank score player {{ id {names} }} }} }} }}"""
        _, writer = await _stalled_socket(api, query)
        await _settled(lambda: sockets.subscriptions == 1)
        plays = 0
        while sockets.dropped == 0:
            assert plays < 1000, "the stalled socket was never dropped"
            await api.submit(f"p{plays % 30:02}", "b", 1000 + plays)
            plays += 1
        await _settled(lambda: sockets.open == 0 and sockets.subscriptions == 0)
        assert api.http.app[BROKER].listening("b") == 0
        writer.close()
        # Everyone else is still served, on HTTP and on WebSocket.
        async with socket(api) as ws:
            await subscribe(ws, "1", WATCH, {"b": "b"})
            assert (await receive(ws))["type"] == "next"


MB = 1 << 20


def _resident_mb() -> float:
    """This process's resident memory (the service runs in it; the flood does not)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


FLOOD_WAIT = 600.0
"""Seconds the flood and the test wait for each of its answers: only a guard against a hang.
The flood's 160 first pushes of 100 entries each, built while tracemalloc traces every
allocation of the service, take minutes on a machine loaded by other work."""


@pytest.mark.slow
@pytest.mark.timeout(3 * FLOOD_WAIT)
async def test_a_socket_flood_is_refused_past_the_limits_and_memory_returns(api: Api) -> None:
    """50 anonymous sockets from one address, each asking for 100 subscriptions of a
    100-entry board: 16 sockets open, 10 subscriptions each, everything else refused; the
    service's memory stays near its baseline and returns to it once they close."""
    sockets = api.http.app[SOCKETS]
    await api.create_board("b")
    for n in range(100):
        await api.create_player(f"p{n:02}", "n" * 100)
        await api.submit(f"p{n:02}", "b", n)
    async with socket(api) as ws:  # every code path warm before the baseline
        await subscribe(ws, "1", WATCH, {"b": "b"})
        assert (await receive(ws))["type"] == "next"
    await _settled(lambda: sockets.open == 0)
    gc.collect()
    baseline = _resident_mb()
    tracemalloc.start()

    server = api.http.server
    flood = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.socket_flood",
        f"http://{server.host}:{server.port}/graphql",
        "--board",
        "b",
        "--key",  # no allowance of cost points stops it first: the socket limits do
        API_KEYS[0],
        "--wait",
        str(FLOOD_WAIT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert flood.stdin is not None
        assert flood.stdout is not None
        counts = json.loads(await asyncio.wait_for(flood.stdout.readline(), FLOOD_WAIT))
        assert counts == {
            "opened": 16,
            "refusedSockets": {"429": 34},
            "running": 160,
            "refusedSubscriptions": {"THROTTLED": 16 * 90},
        }
        assert (sockets.open, sockets.subscriptions) == (16, 160)
        # Plays reach the 160 subscribers while the flood is held; HTTP answers meanwhile.
        await api.create_player("top")
        await api.submit("top", "b", 10_000)
        board = await api.gql('{ leaderboard(id: "b") { entryCount } }')
        assert board == {"leaderboard": {"entryCount": 101}}
        held = _resident_mb()
        held_heap = tracemalloc.get_traced_memory()[0] / MB
        flood.stdin.write(b"close\n")
        await flood.stdin.drain()
        closed = await asyncio.wait_for(flood.stdout.readline(), FLOOD_WAIT)
        assert json.loads(closed) == {"closed": 16}
        await flood.wait()
    finally:
        if flood.returncode is None:
            flood.kill()
            await flood.wait()
    await _settled(lambda: sockets.open == 0 and sockets.subscriptions == 0)
    assert api.http.app[BROKER].listening("b") == 0
    gc.collect()
    after = _resident_mb()
    after_heap, peak_heap = (size / MB for size in tracemalloc.get_traced_memory())
    tracemalloc.stop()
    print(
        f"resident MB: baseline {baseline:.1f}, held {held:.1f}, after {after:.1f};"
        f" Python heap since baseline MB: held {held_heap:.1f}, peak {peak_heap:.1f},"
        f" after {after_heap:.1f}"
    )
    assert held - baseline < 150
    assert held_heap < 40
    assert after_heap < 2


async def test_subscribers_woken_by_one_play_share_one_read(api: Api) -> None:
    """Twenty subscribers of a board (on five sockets) cost one read of its top per change,
    not twenty: the play's pushes add one Query, one GetItem and one BatchGetItem."""
    await api.create_board("b")
    for n in range(3):
        await api.create_player(f"p{n}")
        await api.submit(f"p{n}", "b", n)
    await api.create_player("top")
    async with AsyncExitStack() as stack:
        sockets = [await stack.enter_async_context(socket(api)) for _ in range(5)]
        for ws in sockets:
            for n in range(4):
                await subscribe(ws, str(n), WATCH, {"b": "b"})
        for ws in sockets:
            for _ in range(4):
                assert (await receive(ws))["type"] == "next"
        api.reset_calls()
        await api.submit("top", "b", 100)
        for ws in sockets:
            for _ in range(4):
                entries = (await receive(ws))["payload"]["data"]["leaderboardChanged"]["entries"]
                assert entries[0] == {"rank": 1, "score": 100, "player": {"id": "top"}}
        # The play: a BatchGetItem, the board's Query and its transaction; the twenty
        # pushes: one read (the board's Query, its top's Query, its players' BatchGetItem).
        assert api.calls == {
            "BatchGetItem": 1 + 1,
            "TransactWriteItems": 1,
            "Query": 1 + 2,
        }
