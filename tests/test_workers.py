"""`leaderboard serve --workers N` and its drain on SIGTERM, through the real command.

The service runs as a subprocess against the fault proxy in front of the session's DynamoDB
Local, so that a test can hold plays in flight (their transaction held at the proxy) while
it stops the service, and knows they reached the service before the signal.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dynamo.scores import player_entry
from dynamo.table import create_table
from faultproxy import Fault, FaultProxy, Rule
from leaderboard.backend import LOCAL_CREDENTIALS, open_table
from leaderboard.child_server import reserved_port
from leaderboard.config import Settings, default_cache_dir
from leaderboard.drain import GOING_AWAY, SOCKET_CLOSE_WAIT
from leaderboard.workers import CLEANUP_MARGIN
from tests.conftest import ADMIN_KEYS, API_KEYS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TRANSACT = "TransactWriteItems"
SHUTDOWN_TIMEOUT = 30.0
"""The drain bound the service is started with: long enough for a slow shared machine to
finish the held plays once they are released."""
EXIT_BOUND = SHUTDOWN_TIMEOUT + SOCKET_CLOSE_WAIT + CLEANUP_MARGIN + 15
"""How long the master may take to exit after SIGTERM: the workers' drain bound, the
sockets' close wait and the clean-up margin (the master kills a worker past them), and time
to stop."""
PLAYS = 8
WATCH = 'subscription { leaderboardChanged(leaderboardId: "b", first: 3) { leaderboardId } }'
SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    improved errors { code message } } }"""


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    base: str
    port: int
    output: Path

    def log(self) -> str:
        return self.output.read_text()


def _env(settings: Settings, shutdown_timeout: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LEADERBOARD_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        LEADERBOARD_CACHE_DIR=str(default_cache_dir()),
        AWS_ACCESS_KEY_ID=LOCAL_CREDENTIALS[0],
        AWS_SECRET_ACCESS_KEY=LOCAL_CREDENTIALS[1],
        AWS_REGION=settings.region,
        LEADERBOARD_TABLE=settings.table,
        LEADERBOARD_API_KEYS=API_KEYS[0],
        LEADERBOARD_ADMIN_KEYS=ADMIN_KEYS[0],
        LEADERBOARD_CURSOR_SECRET="workers-test-cursor-secret",
        LEADERBOARD_LIMIT_SHUTDOWN_TIMEOUT=str(shutdown_timeout),
        # Plays are held at the proxy for seconds on purpose: not past their deadline.
        LEADERBOARD_LIMIT_REQUEST_DEADLINE="60",
        LEADERBOARD_LIMIT_QUEUE_TIMEOUT="50",
    )
    return env


def _start(
    settings: Settings,
    cwd: Path,
    port: int,
    shutdown_timeout: float,
    options: list[str],
    env: dict[str, str] | None = None,
) -> Served:
    output = cwd / f"serve-{port}.log"
    command = [sys.executable, "-m", "leaderboard.cli", "serve", "--port", str(port), *options]
    with open(output, "w") as sink:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env={**_env(settings, shutdown_timeout), **(env or {})},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    return Served(process, f"http://127.0.0.1:{port}", port, output)


@asynccontextmanager
async def _serving(
    settings: Settings,
    cwd: Path,
    *options: str,
    shutdown_timeout: float = SHUTDOWN_TIMEOUT,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Served]:
    """`leaderboard serve` with ``options`` (and ``env`` added to its environment) until it
    answers /healthz; stopped (SIGTERM, then SIGKILL) if a test leaves it running. Its port
    is the test's throughout."""
    with reserved_port("127.0.0.1") as port:
        served = _start(settings, cwd, port, shutdown_timeout, list(options), env)
        try:
            async with aiohttp.ClientSession() as http:
                deadline = time.monotonic() + 120
                while not await _healthy(http, served.base):
                    assert served.process.poll() is None, served.log()
                    assert time.monotonic() < deadline, served.log()
                    await asyncio.sleep(0.2)
            yield served
        finally:
            if served.process.poll() is None:
                served.process.terminate()
                if await _exited(served, EXIT_BOUND) is None:
                    served.process.kill()
                    served.process.wait()


async def _exited(served: Served, within: float) -> int | None:
    """The command's exit status, waited for up to ``within`` seconds (without holding up
    this event loop, where the proxy it talks to runs); None if it still runs."""
    deadline = time.monotonic() + within
    while (status := served.process.poll()) is None:
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(0.1)
    return status


async def _exit_status(served: Served, within: float) -> int:
    status = await _exited(served, within)
    assert status is not None, f"still running after {within:g} s:\n{served.log()}"
    return status


async def _healthy(http: aiohttp.ClientSession, base: str) -> bool:
    try:
        async with http.get(f"{base}/healthz") as response:
            return response.status == 200
    except aiohttp.ClientConnectionError:
        return False


async def _gql(
    http: aiohttp.ClientSession, base: str, query: str, variables: dict[str, Any] | None = None
) -> dict[str, Any]:
    async with http.post(
        f"{base}/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {ADMIN_KEYS[0]}"},
    ) as response:
        body: dict[str, Any] = await response.json()
    assert response.status == 200, body
    assert "errors" not in body, body
    return body["data"]  # type: ignore[no-any-return]


async def _play(
    http: aiohttp.ClientSession, base: str, player: str, score: int
) -> tuple[int, dict[str, Any], str]:
    """Submit a play; its status, body and ``Connection`` header."""
    variables = {"i": {"playerId": player, "leaderboardId": "b", "gameId": "g", "score": score}}
    async with http.post(
        f"{base}/graphql",
        json={"query": SUBMIT, "variables": variables},
        headers={"Authorization": f"Bearer {API_KEYS[0]}"},
    ) as response:
        return response.status, await response.json(), response.headers.get("Connection", "")


async def _board_with_players(
    http: aiohttp.ClientSession, base: str, count: int = PLAYS
) -> list[str]:
    """Board ``b`` and ``count`` players."""
    players = [f"p{n}" for n in range(count)]
    await _gql(
        http,
        base,
        'mutation { createLeaderboard(input: {id: "b", name: "b", period: GLOBAL}) '
        "{ errors { code } } }",
    )
    for player in players:
        data = await _gql(
            http,
            base,
            "mutation($i: CreatePlayerInput!) { createPlayer(input: $i) { errors { code } } }",
            {"i": {"id": player, "name": player, "email": f"{player}@x.example"}},
        )
        assert data["createPlayer"]["errors"] == []
    return players


@pytest.fixture
async def made(settings: Settings) -> Settings:
    """``settings``, its table created."""
    async with open_table(settings, LOCAL_CREDENTIALS) as db:
        await create_table(db.client, db.table)
    return settings


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ")".
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


async def _operations_counted(base: str, scrapes: int) -> list[float]:
    """The GraphQL operations counted by ``scrapes`` scrapes of /metrics, made at once over
    fresh connections (so that both workers answer some)."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as h:

        async def one() -> float:
            async with h.get(f"{base}/metrics") as response:
                assert response.status == 200
                text = await response.text()
            return sum(
                sample.value
                for family in text_string_to_metric_families(text)
                for sample in family.samples
                if sample.name == "leaderboard_requests_total"
            )

        return list(await asyncio.gather(*(one() for _ in range(scrapes))))


async def _answering_pids(base: str, want: set[int]) -> set[int]:
    """The pids named by /healthz, asked over fresh connections at once, until ``want`` have
    all answered (or a minute has passed)."""
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while not want <= seen and time.monotonic() < deadline:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as h:

            async def one(http: aiohttp.ClientSession = h) -> int:
                async with http.get(f"{base}/healthz") as response:
                    pid: int = (await response.json())["pid"]
                    return pid

            seen |= set(await asyncio.gather(*(one() for _ in range(8))))
    return seen


async def test_workers_share_the_port_and_a_dead_one_is_replaced(
    made: Settings, tmp_path: Path
) -> None:
    assert made.endpoint_url is not None
    async with _serving(
        made, tmp_path, "--workers", "2", "--endpoint-url", made.endpoint_url
    ) as served:
        workers = _children(served.process.pid)
        assert len(workers) == 2, served.log()  # with an endpoint, no backend of its own
        assert await _answering_pids(served.base, workers) == workers
        async with aiohttp.ClientSession() as http:
            players = await _board_with_players(http, served.base)
            status, body, _ = await _play(http, served.base, players[0], 70)
            assert status == 200
            assert body["data"]["submitScore"] == {"improved": True, "errors": []}
            top = await _gql(
                http, served.base, '{ leaderboard(id: "b") { entryCount } }'
            )  # on whichever worker
            assert top["leaderboard"]["entryCount"] == 1
        # Without a PROMETHEUS_MULTIPROC_DIR of its own, the pool still reports its metrics
        # pooled: a scrape of either worker counts every operation sent (the board, the
        # players, the play, the read).
        for _ in range(3):
            assert await _operations_counted(served.base, 8) == [len(players) + 3] * 8

        dead = min(workers)
        os.kill(dead, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while len(_children(served.process.pid) - {dead}) < 2:
            assert time.monotonic() < deadline, served.log()
            await asyncio.sleep(0.2)
        replaced = _children(served.process.pid)
        assert dead not in replaced
        assert await _answering_pids(served.base, replaced) == replaced
        served.process.send_signal(signal.SIGTERM)
        assert await _exit_status(served, EXIT_BOUND) == 0, served.log()
    # gunicorn logged in the service's format (JSON lines), not in its own ("[time] [pid]
    # [LEVEL] message"); the rest of the output is the banner.
    lines = served.log().splitlines()
    logged = [json.loads(line) for line in lines if line.startswith("{")]
    messages = [entry["msg"] for entry in logged if entry["logger"] == "gunicorn.error"]
    [new] = replaced - workers
    assert f"Booting worker with pid: {new}" in messages
    # Each worker, the replacement too, serves on uvloop's loop (aiohttp's uvloop worker).
    loops = [e["msg"] for e in logged if e["msg"].startswith("event loop: ")]
    assert loops == ["event loop: uvloop"] * 3, loops
    # ... and froze what its start made out of the collector's generations.
    settled = [e["msg"] for e in logged if e["msg"].startswith("heap settled: ")]
    assert len(settled) == 3, settled
    assert not [line for line in lines if line.startswith("[")]


def _command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:  # gone meanwhile
        return ""


async def test_embedded_backends_start_once_for_all_workers(
    settings: Settings, tmp_path: Path
) -> None:
    """Without an endpoint, the master starts DynamoDB Local and Redis once, creates and
    seeds the table once and prints its banner once; both workers serve that data; the
    master's exit stops the backends."""
    options = ("--workers", "2", "--in-memory", "--demo-players", "3")
    async with _serving(settings, tmp_path, *options) as served:
        children = _children(served.process.pid)
        names = Counter(_command_name(pid) for pid in children)
        assert (names["java"], names["redis-server"], len(children)) == (1, 1, 4), names
        backends = {pid for pid in children if _command_name(pid) in ("java", "redis-server")}
        workers = children - backends
        assert await _answering_pids(served.base, workers) == workers
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as h:
            tops = await asyncio.gather(
                *(
                    _gql(h, served.base, '{ leaderboard(id: "global") { entryCount } }')
                    for _ in range(8)
                )
            )
        assert {top["leaderboard"]["entryCount"] for top in tops} == {3}
        served.process.send_signal(signal.SIGTERM)
        assert await _exit_status(served, EXIT_BOUND) == 0, served.log()
    log = served.log()
    assert log.count("Leaderboard GraphQL service") == 1
    assert log.count("new table") == 1
    assert {_command_name(pid) for pid in backends} <= {""}  # no such process any more


async def _refused(port: int) -> None:
    """Wait until the port refuses connections: the service no longer listens. A probe that
    lands in the listener's queue just as the listener closes is reset by the kernel; the
    next one tells."""
    deadline = time.monotonic() + 30
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except ConnectionRefusedError:
            return
        except ConnectionResetError:
            pass
        else:
            writer.close()
        assert time.monotonic() < deadline, "the service still listens"
        await asyncio.sleep(0.05)


@asynccontextmanager
async def _idle_keep_alive(port: int) -> AsyncIterator[asyncio.StreamReader]:
    """A connection that has been answered once and is kept open, idle."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        fields = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:] if line)
        await reader.readexactly(int(fields[b"Content-Length"]))
        yield reader
    finally:
        writer.close()


async def _subscribed(http: aiohttp.ClientSession, base: str) -> aiohttp.ClientWebSocketResponse:
    """A WebSocket with a running subscription, its first push received."""
    ws = await http.ws_connect(f"{base}/graphql", protocols=("graphql-transport-ws",))
    await ws.send_json({"type": "connection_init"})
    assert (await ws.receive_json(timeout=30))["type"] == "connection_ack"
    await ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": WATCH}})
    assert (await ws.receive_json(timeout=30))["type"] == "next"
    return ws


@pytest.mark.parametrize("workers", [2, 1])
async def test_sigterm_answers_the_plays_in_flight_and_closes_websockets_with_1001(
    made: Settings, proxy: FaultProxy, tmp_path: Path, workers: int
) -> None:
    """Plays reach the service and wait on their transaction; the service is told to stop.
    It stops listening (a new connection is refused), closes its WebSocket with 1001 and
    an idle keep-alive connection with an end of stream, yet answers every play in flight
    once the transactions go through, each written to the table, and exits 0."""
    async with (
        _serving(made, tmp_path, "--workers", str(workers), "--endpoint-url", proxy.url) as served,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=PLAYS)) as http,
        aiohttp.ClientSession() as watcher,
    ):
        players = await _board_with_players(http, served.base)
        # Each play has a connection of its own, opened and kept alive beforehand.
        await asyncio.gather(*(_healthy(http, served.base) for _ in range(PLAYS)))
        ws = await _subscribed(watcher, served.base)
        closing = asyncio.create_task(ws.receive(timeout=60))
        release = asyncio.Event()
        proxy.inject(Rule(Fault.HOLD, TRANSACT, released=release))
        scores = {player: 100 + n for n, player in enumerate(players)}
        plays = [
            asyncio.create_task(_play(http, served.base, player, score))
            for player, score in scores.items()
        ]
        try:
            async with _idle_keep_alive(served.port) as idle:
                await asyncio.wait_for(proxy.wait_received(TRANSACT, PLAYS), timeout=60)
                served.process.send_signal(signal.SIGTERM)
                await _refused(served.port)
                with pytest.raises(aiohttp.ClientConnectorError) as refused:
                    async with aiohttp.ClientSession() as fresh:
                        await _play(fresh, served.base, players[0], 1)
                assert refused.value.os_error.errno == errno.ECONNREFUSED
                close = await closing
                assert close.type is aiohttp.WSMsgType.CLOSE, close
                assert (close.data, close.extra) == (1001, GOING_AWAY.decode())
                # The idle connection is closed between requests: an end of stream.
                assert await asyncio.wait_for(idle.read(), timeout=30) == b""
                assert served.process.poll() is None  # still draining
        finally:
            release.set()
        answers = await asyncio.wait_for(asyncio.gather(*plays), timeout=SHUTDOWN_TIMEOUT)
        assert await _exit_status(served, EXIT_BOUND) == 0, served.log()

    for status, body, connection in answers:
        assert status == 200, body
        assert body["data"]["submitScore"] == {"improved": True, "errors": []}
        assert connection.lower() == "close"  # not to be reused: the service is stopping
    async with open_table(made, LOCAL_CREDENTIALS) as db:
        for player, score in scores.items():
            entry = await player_entry(db, player, "b")
            assert entry is not None, player
            assert entry.score == score


async def test_a_play_still_running_at_the_drain_bound_is_cut_off(
    made: Settings, proxy: FaultProxy, tmp_path: Path
) -> None:
    """The drain is bounded: a play whose transaction does not come back is cut off once
    the drain timeout has passed (its client sees the connection close without an answer:
    an answer would mean the service had waited for it), and the master exits 0."""
    bound = 2.0
    async with (
        _serving(
            made, tmp_path, "--workers", "2", "--endpoint-url", proxy.url, shutdown_timeout=bound
        ) as served,
        aiohttp.ClientSession() as http,
    ):
        [player] = await _board_with_players(http, served.base, 1)
        release = asyncio.Event()
        proxy.inject(Rule(Fault.HOLD, TRANSACT, released=release))
        play = asyncio.create_task(_play(http, served.base, player, 5))
        try:
            await asyncio.wait_for(proxy.wait_received(TRANSACT, 1), timeout=60)
            served.process.send_signal(signal.SIGTERM)
            with pytest.raises(aiohttp.ServerDisconnectedError):
                await asyncio.wait_for(play, timeout=EXIT_BOUND)
            exit_bound = bound + SOCKET_CLOSE_WAIT + CLEANUP_MARGIN + 15
            assert await _exit_status(served, exit_bound) == 0, served.log()
        finally:
            release.set()


WATCH_TOP = (
    'subscription { leaderboardChanged(leaderboardId: "b", first: 3) { entries { score } } }'
)
PAGE = '{ leaderboard(id: "b") { topScores(first: 3) { edges { node { score } } } } }'


@asynccontextmanager
async def _one_connection_per_worker(
    base: str, workers: int
) -> AsyncIterator[dict[int, aiohttp.ClientSession]]:
    """A client session of one keep-alive connection to each worker, by its process id (a
    connection stays with the worker that accepted it)."""
    sessions: dict[int, aiohttp.ClientSession] = {}
    try:
        for _ in range(64):
            http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
            async with http.get(f"{base}/healthz") as response:
                pid: int = (await response.json())["pid"]
            if pid in sessions:
                await http.close()
            else:
                sessions[pid] = http
            if len(sessions) == workers:
                break
        assert len(sessions) == workers, sessions
        yield sessions
    finally:
        for http in sessions.values():
            await http.close()


async def _mesh(http: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    async with http.get(f"{base}/healthz") as response:
        body: dict[str, Any] = await response.json()
    return body["workers"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("feed", [False, True], ids=["without-redis", "with-redis"])
async def test_every_play_through_any_worker_reaches_every_worker_at_once(
    made: Settings, tmp_path: Path, request: pytest.FixtureRequest, feed: bool
) -> None:
    """Two workers, their subscribers' refresh off (so a push can come only from a change
    notice), the response cache on, with and without Redis (with it, but no projector
    feeding the change feed, so that only the workers' own mesh carries the plays): each of
    20 plays, alternately through one worker and the other, is pushed to a subscriber on
    one of them in order, and a top page cached by either worker is evicted by a play
    through the other."""
    assert made.endpoint_url is not None
    env = {"LEADERBOARD_SUBSCRIPTION_REFRESH_SECONDS": "0", "LEADERBOARD_CACHE_MB": "8"}
    if feed:
        env["LEADERBOARD_REDIS_URL"] = request.getfixturevalue("redis_url")
    async with (
        _serving(
            made, tmp_path, "--workers", "2", "--endpoint-url", made.endpoint_url, env=env
        ) as served,
        _one_connection_per_worker(served.base, 2) as pinned,
    ):
        first, second = pinned.values()
        players = await _board_with_players(first, served.base, count=20)
        await _play(first, served.base, players[0], 1)
        async with (
            aiohttp.ClientSession() as watcher,
            watcher.ws_connect(f"{served.base}/graphql", protocols=("graphql-transport-ws",)) as ws,
        ):
            await ws.send_json({"type": "connection_init"})
            assert (await ws.receive_json(timeout=30))["type"] == "connection_ack"
            await ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": WATCH_TOP}})
            assert await _top_scores(ws) == [1]
            delays = []
            for n, player in enumerate(players):
                through = (first, second)[n % 2]
                score = 100 + n
                status, body, _ = await _play(through, served.base, player, score)
                assert (status, body["data"]["submitScore"]["errors"]) == (200, []), body
                answered = time.monotonic()
                # The hang guard only: the push comes from the play's notice or not at all.
                top = await _top_scores(ws, wait=10)
                delays.append(time.monotonic() - answered)
                assert top[0] == score, (n, top, delays)
            # Shown with -s: how long each push took after its play's answer.
            print(f"pushes after their plays (s): max {max(delays):.3f}, {sorted(delays)}")
        # Each worker heard of the plays made through the other: 10 each, and the board.
        for http in (first, second):
            assert (await _mesh(http, served.base))["received"] >= 10
        # A page cached by either worker is evicted by a play through the other.
        for n, (reader, writer) in enumerate(((first, second), (second, first))):
            before = await _gql(reader, served.base, PAGE)
            assert before == await _gql(reader, served.base, PAGE)  # cached now
            await _play(writer, served.base, players[n], 1_000 + n)
            after = await _gql(reader, served.base, PAGE)
            assert after["leaderboard"]["topScores"]["edges"][0]["node"]["score"] == 1_000 + n


async def _top_scores(ws: aiohttp.ClientWebSocketResponse, wait: float = 30) -> list[int]:
    message: dict[str, Any] = await ws.receive_json(timeout=wait)
    assert message["type"] == "next", message
    return [entry["score"] for entry in message["payload"]["data"]["leaderboardChanged"]["entries"]]
