"""GET /metrics: operations by name and outcome, latency, DynamoDB calls, the circuit, open
sockets and the rank index's lag, read back in the Prometheus text format from the real app
against DynamoDB Local; who may scrape; and several processes reporting through one
directory."""

from __future__ import annotations

import asyncio
import io
import logging
import math
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import ClientWebSocketResponse
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from dynamo.resilience import CircuitBreaker
from leaderboard.app import CALLS, create_app
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.child_server import reserved_port
from leaderboard.config import Settings
from leaderboard.metrics import MAX_OPERATIONS, OTHER, Metrics, process_exited
from tests.conftest import ADMIN_KEYS, API_KEYS, WAIT, Api, Indexed, Table, _serve

Labels = tuple[tuple[str, str], ...]
Samples = dict[tuple[str, Labels], float]
Key = tuple[str, str, str]
"""(transport, operation, outcome)"""

METRICS_KEY = "scrape-key-0123456789"
KEYED = {"Authorization": f"Bearer {API_KEYS[0]}"}
ELSEWHERE = {"X-Forwarded-For": "203.0.113.9"}
"""A request a proxy forwarded from a client on another machine."""


def parse(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def by_label(samples: Samples, name: str, *labels: str) -> dict[tuple[str, ...], float]:
    """The samples named ``name``, keyed by the values of ``labels``."""
    found: dict[tuple[str, ...], float] = {}
    for (sample, sample_labels), value in samples.items():
        if sample == name:
            values = dict(sample_labels)
            found[tuple(values[label] for label in labels)] = value
    return found


def value(samples: Samples, name: str) -> float:
    return samples[(name, ())]


async def scrape(http: TestClient[Any, Any]) -> Samples:
    response = await http.get("/metrics")
    assert response.status == 200, await response.text()
    return parse(await response.text())


def requests(samples: Samples) -> dict[Key, float]:
    found = by_label(samples, "leaderboard_requests_total", "transport", "operation", "outcome")
    return {(t, o, r): v for (t, o, r), v in found.items()}


async def post(api: Api, query: str, **variables: Any) -> str:
    """Send an operation with a game-server key; returns its outcome as the client sees it:
    ``ok``, or its first error's code."""
    response = await api.http.post(
        "/graphql", json={"query": query, "variables": variables}, headers=KEYED
    )
    body = await response.json()
    payloads = [p for p in (body.get("data") or {}).values() if isinstance(p, dict)]
    errors = body.get("errors") or [e for p in payloads for e in p.get("errors", [])]
    if errors:
        code: str = errors[0].get("code") or errors[0]["extensions"]["code"]
        return code
    return "ok"


NEW_BOARD = """mutation NewBoard { createLeaderboard(input: {id: "b", name: "b", period: GLOBAL})
    { errors { code } } }"""
NEW_PLAYER = """mutation NewPlayer($id: ID!, $name: String!, $email: String!) {
    createPlayer(input: {id: $id, name: $name, email: $email}) { errors { code } } }"""
PLAY = """mutation Play($score: Long!) { submitScore(input: {playerId: "ann",
    leaderboardId: "b", gameId: "g", score: $score}) { errors { code } } }"""
TOP = """query Top { leaderboard(id: "b") { topScores(first: 5) { edges { node { score } } } } }"""


async def test_operations_are_counted_by_name_and_outcome_with_their_latency_and_calls(
    api: Api,
) -> None:
    assert await post(api, NEW_BOARD) == "ok"
    for player in ("ann", "bob"):
        assert (
            await post(api, NEW_PLAYER, id=player, name=player, email=f"{player}@x.example") == "ok"
        )
    for score in (10, 20, 30):
        assert await post(api, PLAY, score=score) == "ok"
    for _ in range(2):
        assert await post(api, TOP) == "ok"
    assert await post(api, "{ __typename }") == "ok"
    assert await post(api, "query Broken { nothing }") == "GRAPHQL_VALIDATION_FAILED"
    bad_body = await api.http.post(
        "/graphql", data=b"not json", headers={"Content-Type": "application/json"}
    )
    assert bad_body.status == 400
    over_get = await api.http.get("/graphql", params={"query": "mutation Sneaky { __typename }"})
    assert over_get.status == 405

    samples = await scrape(api.http)
    expected = {
        ("http", "NewBoard", "ok"): 1,
        ("http", "NewPlayer", "ok"): 2,
        ("http", "Play", "ok"): 3,
        ("http", "Top", "ok"): 2,
        ("http", "anonymous", "ok"): 1,
        ("http", "Broken", "GRAPHQL_VALIDATION_FAILED"): 1,
        ("http", "anonymous", "HTTP_400"): 1,
        ("http", "anonymous", "HTTP_405"): 1,
    }
    assert requests(samples) == expected
    # One latency sample for each request, in the operation's histogram.
    counts = by_label(samples, "leaderboard_request_seconds_count", "transport", "operation")
    infinite = by_label(
        samples, "leaderboard_request_seconds_bucket", "transport", "operation", "le"
    )
    for transport, operation in counts:
        answered = sum(n for (t, o, _), n in expected.items() if (t, o) == (transport, operation))
        assert counts[(transport, operation)] == answered, operation
        assert infinite[(transport, operation, "+Inf")] == answered
    assert len(counts) == len({(t, o) for t, o, _ in expected})

    # DynamoDB calls by operation are the app's own count of them.
    calls = by_label(samples, "leaderboard_dynamodb_calls_total", "operation")
    assert {op: int(n) for (op,), n in calls.items()} == api.calls
    assert calls[("TransactWriteItems",)] >= 3
    assert value(samples, "leaderboard_circuit_open") == 0
    assert value(samples, "leaderboard_websockets_open") == 0
    assert value(samples, "leaderboard_subscriptions_active") == 0
    assert not any(name.startswith("leaderboard_rank_index") for name, _ in samples)

    # A scrape is no GraphQL request, and makes no call to the table.
    again = await scrape(api.http)
    assert requests(again) == expected
    assert by_label(again, "leaderboard_dynamodb_calls_total", "operation") == calls


async def test_the_exposition_has_its_media_type_and_the_security_headers(api: Api) -> None:
    response = await api.http.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert (
        response.headers["Content-Security-Policy"] == "default-src 'none'; frame-ancestors 'none'"
    )
    assert "X-Request-Id" in response.headers
    assert (await api.http.post("/metrics", data=b"x" * 1000)).status == 405


def _head(length: int) -> bytes:
    return (
        "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


async def test_bodies_refused_by_http_status_are_counted_by_it(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="leaderboard.access")
    # Short enough to wait for; long past the abort, which comes 0.2 s after the body starts.
    limits = replace(settings.limits, body_timeout=2.0)
    async with _serve(replace(settings, limits=limits), None) as api:
        oversized = await api.http.post(
            "/graphql",
            data=io.BytesIO(b"x" * (2 << 20)),
            headers={"Content-Type": "application/json"},
        )
        assert oversized.status == 413
        server = api.http.server
        # A body that stops coming, and one whose client goes away in its middle.
        _, slow = await asyncio.open_connection(server.host, server.port)
        slow.write(_head(1000) + b'{"query": ')
        _, aborted = await asyncio.open_connection(server.host, server.port)
        aborted.write(_head(1000) + b'{"query": ')
        await asyncio.gather(slow.drain(), aborted.drain())
        await asyncio.sleep(0.2)
        aborted.transport.abort()
        try:
            samples = await _eventually(api, lambda s: len(requests(s)) == 3)
        finally:
            slow.close()
        assert requests(samples) == {
            ("http", "anonymous", "HTTP_413"): 1,
            ("http", "anonymous", "HTTP_408"): 1,
            ("http", "anonymous", "HTTP_499"): 1,
        }
    # The access log says the same of each: the aborted one is no failure of the service.
    logged = sorted(
        getattr(r, "status", 0)
        for r in caplog.records
        if r.getMessage() == "request" and getattr(r, "path", None) == "/graphql"
    )
    assert logged == [408, 413, 499], logged


@asynccontextmanager
async def _socket(api: Api) -> AsyncIterator[ClientWebSocketResponse]:
    async with api.http.ws_connect("/graphql", protocols=("graphql-transport-ws",)) as ws:
        await ws.send_json({"type": "connection_init"})
        assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        yield ws


async def _subscribe(ws: ClientWebSocketResponse, id_: str, query: str) -> dict[str, Any]:
    await ws.send_json({"id": id_, "type": "subscribe", "payload": {"query": query}})
    message: dict[str, Any] = await ws.receive_json(timeout=WAIT)
    assert message["id"] == id_, message
    return message


async def _eventually(api: Api, check: Callable[[Samples], bool], seconds: float = WAIT) -> Samples:
    """The first scrape within ``seconds`` that passes ``check``."""
    async with asyncio.timeout(seconds):
        while True:
            samples = await scrape(api.http)
            if check(samples):
                return samples
            await asyncio.sleep(0.05)


async def test_websocket_operations_sockets_and_subscriptions(api: Api) -> None:
    await api.create_board("b")
    async with _socket(api) as ws:
        watch = 'subscription Watch { leaderboardChanged(leaderboardId: "b") { leaderboardId } }'
        assert (await _subscribe(ws, "1", watch))["type"] == "next"
        assert (await _subscribe(ws, "2", "query Over { __typename }"))["type"] == "next"
        assert (await ws.receive_json(timeout=WAIT))["type"] == "complete"
        lost = 'subscription Lost { leaderboardChanged(leaderboardId: "no") { leaderboardId } }'
        refused = await _subscribe(ws, "3", lost)
        errors = refused["payload"]["errors"] if refused["type"] == "next" else refused["payload"]
        assert errors[0]["extensions"]["code"] == "LEADERBOARD_NOT_FOUND", refused

        samples = await _eventually(
            api, lambda s: ("ws", "Lost", "LEADERBOARD_NOT_FOUND") in requests(s)
        )
        assert value(samples, "leaderboard_websockets_open") == 1
        assert value(samples, "leaderboard_subscriptions_active") == 1
        assert requests(samples) == {
            ("http", "anonymous", "ok"): 1,
            ("ws", "Over", "ok"): 1,
            ("ws", "Lost", "LEADERBOARD_NOT_FOUND"): 1,
        }

        await ws.send_json({"id": "1", "type": "complete"})
        samples = await _eventually(
            api,
            lambda s: (
                value(s, "leaderboard_subscriptions_active") == 0
                and ("ws", "Watch", "ok") in requests(s)
            ),
        )
        counts = by_label(samples, "leaderboard_request_seconds_count", "transport", "operation")
        assert counts[("ws", "Watch")] == 1
        assert counts[("ws", "Over")] == 1
    await _eventually(api, lambda s: value(s, "leaderboard_websockets_open") == 0)


PAGE = """query Page($first: Int!) { leaderboard(id: "b") { topScores(first: $first) {
    edges { node { rank player { name } } } } } }"""
"""An anonymous query of about 200 points of cost."""


async def test_a_throttled_caller_is_counted_as_throttled(settings: Settings) -> None:
    limits = replace(settings.limits, anonymous_cost_burst=250, anonymous_cost_per_second=1.0)
    async with _serve(replace(settings, limits=limits), None) as api:
        api.clock.hold()  # no point regained between the requests
        await api.create_board("b")
        statuses = []
        for _ in range(3):
            response = await api.http.post(
                "/graphql", json={"query": PAGE, "variables": {"first": 100}}
            )
            statuses.append(response.status)
        assert statuses == [200, 429, 429]
        counted = requests(await scrape(api.http))
        assert counted[("http", "Page", "ok")] == 1
        assert counted[("http", "Page", "THROTTLED")] == 2


async def test_an_unreachable_table_is_counted_and_opens_the_circuit(settings: Settings) -> None:
    # Time enough for every call's retries to end in a failure that counts against the
    # circuit, however slow the machine (running out of time does not count).
    limits = replace(settings.limits, request_deadline=60.0)
    with reserved_port("127.0.0.1") as port:  # nothing listens there, and nothing else can
        gone = replace(settings, endpoint_url=f"http://127.0.0.1:{port}", limits=limits)
        async with TestClient(TestServer(create_app(gone, credentials=LOCAL_CREDENTIALS))) as http:
            profile = 'query Profile { player(id: "ann") { name } }'

            async def ask() -> str:
                response = await http.post("/graphql", json={"query": profile}, headers=KEYED)
                body = await response.json()
                code: str = body["errors"][0]["extensions"]["code"]
                return code

            # Five failures in a row open the circuit; the next request is refused at once.
            failed = await asyncio.gather(*(ask() for _ in range(5)))
            assert failed == ["BACKEND_UNAVAILABLE"] * 5
            assert await ask() == "BACKEND_UNAVAILABLE"
            samples = await scrape(http)
            assert value(samples, "leaderboard_circuit_open") == 1
            assert requests(samples) == {("http", "Profile", "BACKEND_UNAVAILABLE"): 6}
            calls = by_label(samples, "leaderboard_dynamodb_calls_total", "operation")
            assert {op: int(n) for (op,), n in calls.items()} == http.app[CALLS].snapshot()


async def test_distinct_operation_names_are_capped(api: Api) -> None:
    extra = 5
    for n in range(MAX_OPERATIONS + extra):
        assert await post(api, f"query Op{n} {{ __typename }}") == "ok"
    counted = requests(await scrape(api.http))
    names = {operation for _, operation, _ in counted}
    assert names == {f"Op{n}" for n in range(MAX_OPERATIONS)} | {OTHER}
    assert counted[("http", OTHER, "ok")] == extra


def test_names_and_outcomes_that_are_no_graphql_names_or_codes_are_folded() -> None:
    metrics = Metrics(rank_index=False, max_operations=2)
    metrics.operation("ws", "not a name", "ok", 0.1)
    metrics.operation("ws", "x" * 101, "ok", 0.1)
    metrics.operation("ws", "Fine", "<script>", 0.1)
    metrics.operation("ws", None, "THROTTLED", 0.1)
    samples: Samples = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    assert requests(samples) == {
        ("ws", OTHER, "ok"): 2,
        ("ws", "Fine", OTHER): 1,
        ("ws", "anonymous", "THROTTLED"): 1,
    }


def test_a_multiprocess_directory_that_does_not_exist_stops_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="PROMETHEUS_MULTIPROC_DIR names no directory"):
        Metrics(rank_index=False)


def test_the_circuit_reports_each_change_of_state() -> None:
    now = [0.0]
    states: list[str] = []
    breaker = CircuitBreaker(
        threshold=2, cooldown=1.0, clock=lambda: now[0], on_change=states.append
    )
    breaker._succeeded()
    breaker._failed()
    assert states == []
    breaker._failed()
    now[0] = 2.0
    breaker._before()
    breaker._failed()
    now[0] = 4.0
    breaker._before()
    breaker._succeeded()
    breaker._succeeded()
    assert states == ["open", "half-open", "open", "half-open", "closed"]


@pytest.fixture
async def guarded(settings: Settings) -> AsyncIterator[Api]:
    """A service with a metrics key, behind no proxy."""
    async with _serve(replace(settings, metrics_keys=(METRICS_KEY,)), None) as served:
        yield served


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 200),  # from this machine, through no proxy
        (ELSEWHERE, 403),
        ({"Forwarded": "for=203.0.113.9"}, 403),
        ({**ELSEWHERE, "Authorization": f"Bearer {METRICS_KEY}"}, 200),
        ({**ELSEWHERE, "Authorization": f"bearer  {METRICS_KEY} "}, 200),
        ({**ELSEWHERE, "Authorization": f"Bearer {ADMIN_KEYS[0]}"}, 200),
        ({**ELSEWHERE, "Authorization": f"Bearer {API_KEYS[0]}"}, 403),
        ({**ELSEWHERE, "Authorization": f"Bearer {METRICS_KEY}x"}, 403),
        ({**ELSEWHERE, "Authorization": METRICS_KEY}, 403),
        ({**ELSEWHERE, "Authorization": "Bearer \u00e9t\u00e9"}, 403),
    ],
)
async def test_who_may_scrape(guarded: Api, headers: dict[str, str], status: int) -> None:
    response = await guarded.http.get("/metrics", headers=headers)
    assert response.status == status
    body = await response.text()
    if status == 403:
        assert body == "forbidden\n"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    else:
        assert "leaderboard_requests" in body


async def test_behind_a_trusted_proxy_the_address_it_saw_decides(settings: Settings) -> None:
    limits = replace(settings.limits, trusted_proxy_hops=1)
    async with _serve(replace(settings, limits=limits), None) as api:
        local = await api.http.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"})
        assert local.status == 200
        faked = await api.http.get(
            "/metrics", headers={"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}
        )
        assert faked.status == 403


async def test_the_rank_index_lag_is_read_at_each_scrape(indexed: Indexed) -> None:
    api = indexed.api
    samples = await scrape(api.http)
    assert math.isnan(value(samples, "leaderboard_rank_index_lag_seconds"))
    assert value(samples, "leaderboard_rank_index_in_sync") == 0
    await indexed.projector.drain()
    samples = await scrape(api.http)
    assert 0 <= value(samples, "leaderboard_rank_index_lag_seconds") < 60
    assert value(samples, "leaderboard_rank_index_in_sync") == 1


async def test_an_unreachable_rank_index_leaves_its_lag_unknown(settings: Settings) -> None:
    with reserved_port("127.0.0.1") as port:  # nothing listens there, and nothing else can
        nowhere = replace(settings, redis_url=f"redis://127.0.0.1:{port}/0")
        async with _serve(nowhere, None) as api:
            samples = await scrape(api.http)
            assert math.isnan(value(samples, "leaderboard_rank_index_lag_seconds"))
            assert value(samples, "leaderboard_rank_index_in_sync") == 0
            assert value(samples, "leaderboard_circuit_open") == 0


Worker = tuple[asyncio.subprocess.Process, str]
ROOT = Path(__file__).resolve().parent.parent


@asynccontextmanager
async def _worker(settings: Settings, directory: Path) -> AsyncIterator[Worker]:
    """A service process of its own, reporting its metrics to ``directory``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.metrics_worker",
        settings.endpoint_url or "",
        settings.table,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        port = int(await asyncio.wait_for(process.stdout.readline(), 120))
        yield process, f"http://127.0.0.1:{port}"
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()


async def _get_metrics(session: aiohttp.ClientSession, base: str) -> Samples:
    async with session.get(f"{base}/metrics") as response:
        assert response.status == 200
        return parse(await response.text())


@asynccontextmanager
async def _open_socket(
    session: aiohttp.ClientSession, base: str
) -> AsyncIterator[ClientWebSocketResponse]:
    """A WebSocket that a well-behaved client keeps open: acknowledged, and read throughout
    (which answers the service's pings), so that none of the service's bounds on a socket
    closes it however long the test takes."""
    async with session.ws_connect(f"{base}/graphql", protocols=("graphql-transport-ws",)) as ws:
        await ws.send_json({"type": "connection_init"})
        assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        reading = asyncio.create_task(_read_all(ws))
        try:
            yield ws
        finally:
            await ws.close()
            await reading


async def _read_all(ws: ClientWebSocketResponse) -> None:
    async for _ in ws:
        pass


async def test_processes_sharing_a_directory_report_their_sum(
    settings: Settings, table: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        _worker(settings, tmp_path) as (_, one),
        _worker(settings, tmp_path) as (second, two),
        aiohttp.ClientSession(headers=KEYED) as session,
        AsyncExitStack() as stack,
    ):

        async def ask(base: str, query: str) -> None:
            async with session.post(f"{base}/graphql", json={"query": query}) as response:
                assert response.status == 200, await response.text()

        for base, times in ((one, 2), (two, 3)):
            for _ in range(times):
                await ask(base, "query Shared { __typename }")
        await ask(two, 'query Board { leaderboard(id: "none") { name } }')
        ws_one = await stack.enter_async_context(_open_socket(session, one))
        ws_two = await stack.enter_async_context(_open_socket(session, two))

        for base in (one, two):
            samples = await _get_metrics(session, base)
            assert requests(samples) == {
                ("http", "Shared", "ok"): 5,
                ("http", "Board", "ok"): 1,
            }
            counts = by_label(samples, "leaderboard_request_seconds_count", "operation")
            assert counts == {("Shared",): 5, ("Board",): 1}
            calls = by_label(samples, "leaderboard_dynamodb_calls_total", "operation")
            assert calls == {("Query",): 1}  # the board with its count
            assert value(samples, "leaderboard_websockets_open") == 2

        # The second process ends; once its end is reported, only the live one's sockets
        # count, while the counters keep what it did.
        await ws_two.close()
        assert second.stdin is not None
        second.stdin.close()
        await asyncio.wait_for(second.wait(), 30)
        monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
        process_exited(second.pid)
        samples = await _get_metrics(session, one)
        assert value(samples, "leaderboard_websockets_open") == 1
        assert requests(samples)[("http", "Shared", "ok")] == 5
        await ws_one.close()
