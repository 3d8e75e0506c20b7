"""The soak's staleness observers, and the probe plays they watch for.

- A probe writer plays, one at a time and every ``probe_every`` seconds, a score higher than
  any before it on :data:`WATCHED` (the busy ``hot-best`` board and a board only probes play
  on), by a few dedicated players that nothing moderates; each acknowledged probe goes into
  the ledger like any play.
- Subscribers: WebSockets on each instance (several connections, which any of the
  instance's workers may accept), each subscribed to ``leaderboardChanged`` of every watched
  board; each push is an observation.
- Cached readers: on each instance, loops reading the cacheable top page of the watched
  boards, each read on a new connection (which any worker of the instance may accept);
  each answer is an observation.

:func:`soak.staleness.judge` then tells how long each probe took to show everywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from soak.client import GraphQLClient, Stats
from soak.ledger import Play
from soak.staleness import Kind, Observation, Probe
from soak.workload import CREATE_BOARD, CREATE_PLAYER, create

__all__ = [
    "PROBE_BOARD",
    "WATCHED",
    "Observers",
    "ProbeWriter",
    "WatchConfig",
    "bucket_quantile",
    "scrape",
    "setup_probes",
]

PROBE_BOARD = "probed"
"""A board only the probes play on: between two probes its cached page stays valid."""
WATCHED = ("hot-best", PROBE_BOARD)
"""The boards the probes play on and the observers watch (both BEST, DESC)."""
PROBE_BASE = 1_000_000
"""Probe scores start above every score the workload sends (refused ones included)."""
PROBE_PLAYERS = 4

TOP_PAGE = """query LeaderboardPage($id: ID!) { leaderboard(id: $id) { entryCount
  topScores(first: 10) { edges { node { score rank player { id name } } } } } }"""
"""The cacheable top page (see docs/how-to/response-cache.md, "What is cached")."""
WATCH = """subscription Watch($id: ID!) { leaderboardChanged(leaderboardId: $id, first: 3) {
  leaderboardId entries { rank score player { id } } } }"""
PROTOCOL = ("graphql-transport-ws",)


@dataclass(frozen=True)
class WatchConfig:
    bound: float = 2.0
    """Seconds a subscriber or a cached answer may lag an acknowledged play: the change
    feed's p99 with a wide margin (1 s) plus one read."""
    probe_every: float = 0.5
    warmup: float = 10.0
    """Seconds of load before the first probe: the fleet's connection pools, caches and
    subscriptions settle first, as a benchmark's warm-up (the load's own checks start at
    once)."""
    sockets_per_instance: int = 3
    readers_per_instance: int = 2
    read_every: float = 0.05


def probe_players() -> list[str]:
    return [f"probe-{n}" for n in range(PROBE_PLAYERS)]


async def setup_probes(client: GraphQLClient) -> None:
    """Create the probe board and the probe players."""
    board = {
        "id": PROBE_BOARD,
        "name": PROBE_BOARD,
        "period": "GLOBAL",
        "operator": "BEST",
        "sortOrder": "DESC",
        "scoreWidth": 10,
    }
    await create(client, CREATE_BOARD, "createLeaderboard", board)
    for player in probe_players():
        await create(
            client,
            CREATE_PLAYER,
            "createPlayer",
            {"id": player, "name": f"Probe {player}", "email": f"{player}@probe.example"},
        )


class ProbeWriter:
    """Sends the probes; ``probes`` are the acknowledged ones, one per watched board each."""

    def __init__(self, submit: Callable[[Play, str], Awaitable[float | None]]) -> None:
        self.submit = submit
        """Sends a play through the workload's ledger; its acknowledgement time, or None."""
        self.probes: list[Probe] = []
        self.sent = 0

    async def run(self, every: float, stop: asyncio.Event, *, warmup: float = 0.0) -> None:
        players = itertools.cycle(probe_players())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), warmup)
        while not stop.is_set():
            score = PROBE_BASE + self.sent
            self.sent += 1
            play = Play(next(players), "arena", score, WATCHED)
            acked_at = await self.submit(play, "submitScore (probe)")
            if acked_at is not None:
                self.probes += [Probe(board, score, acked_at) for board in WATCHED]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)


def _top_score(entries: Sequence[Any]) -> int | None:
    return int(entries[0]["score"]) if entries else None


@dataclass
class Observers:
    """Every subscriber and cached reader of the run, and what they saw."""

    stats: Stats
    api_key: str
    config: WatchConfig
    seen: list[Observation] = field(default_factory=list)
    subscriptions: int = 0
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self, instances: Sequence[tuple[str, str]]) -> None:
        """Open the sockets and subscribe (waiting for each subscription's first push), and
        start the readers, on each ``(name, GraphQL URL)``."""
        for name, url in instances:
            for n in range(self.config.sockets_per_instance):
                ready = asyncio.Event()
                self._tasks.append(
                    asyncio.create_task(self._socket(name, url, f"socket {n + 1}", ready))
                )
                await ready.wait()
            for n in range(self.config.readers_per_instance):
                self._tasks.append(asyncio.create_task(self._reader(name, url, f"reader {n + 1}")))

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks)

    def _observe(self, kind: Kind, instance: str, observer: str, board: str, **times: Any) -> None:
        self.seen.append(Observation(kind, instance, observer, board, **times))

    async def _socket(self, instance: str, url: str, name: str, ready: asyncio.Event) -> None:
        op = "leaderboardChanged (subscriber)"
        headers = {"Authorization": f"Bearer {self.api_key}"}
        try:
            async with (
                aiohttp.ClientSession() as http,
                http.ws_connect(url, protocols=PROTOCOL, headers=headers) as ws,
            ):
                await ws.send_json({"type": "connection_init"})
                ack = await ws.receive_json(timeout=30)
                if ack.get("type") != "connection_ack":
                    raise RuntimeError(f"no connection_ack: {ack}")
                for n, board in enumerate(WATCHED):
                    payload = {"query": WATCH, "variables": {"id": board}}
                    await ws.send_json({"id": str(n), "type": "subscribe", "payload": payload})
                    self.subscriptions += 1
                ready.set()
                await self._pushes(ws, instance, name)
        except (aiohttp.ClientError, TimeoutError, RuntimeError, ValueError) as error:
            self.stats.error(
                op, "SUBSCRIBER_FAILED", expected=False, detail=f"{instance}: {error!r}"
            )
        finally:
            ready.set()

    async def _pushes(self, ws: aiohttp.ClientWebSocketResponse, instance: str, name: str) -> None:
        op = "leaderboardChanged (subscriber)"
        while not self._stop.is_set():
            try:
                message = await ws.receive(timeout=0.5)
            except TimeoutError:
                continue
            now = time.monotonic()
            if message.type is not aiohttp.WSMsgType.TEXT:
                self.stats.error(op, "SOCKET_CLOSED", expected=False, detail=f"{instance} {name}")
                return
            body = message.json()
            if body.get("type") == "ping":
                await ws.send_json({"type": "pong"})
                continue
            if body.get("type") != "next" or body.get("payload", {}).get("errors"):
                self.stats.error(op, "SUBSCRIPTION_ERROR", expected=False, detail=str(body)[:400])
                continue
            top = body["payload"]["data"]["leaderboardChanged"]
            self._observe(
                Kind.PUSH,
                instance,
                name,
                str(top["leaderboardId"]),
                began_at=now,
                seen_at=now,
                top_score=_top_score(top["entries"]),
            )

    async def _reader(self, instance: str, url: str, name: str) -> None:
        # A new connection for each read: the instance's workers take turns answering.
        connector = aiohttp.TCPConnector(force_close=True)
        timeout = aiohttp.ClientTimeout(total=30)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
            client = GraphQLClient(http, [url], self.api_key, self.stats)
            for board in itertools.cycle(WATCHED):
                if self._stop.is_set():
                    return
                began = time.monotonic()
                answer = await client.request("top page (cached read)", TOP_PAGE, {"id": board})
                if answer.ok:
                    edges = answer.data["leaderboard"]["topScores"]["edges"]
                    self._observe(
                        Kind.READ,
                        instance,
                        name,
                        board,
                        began_at=began,
                        seen_at=time.monotonic(),
                        top_score=_top_score([e["node"] for e in edges]),
                    )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), self.config.read_every)


async def scrape(http: aiohttp.ClientSession, base: str, admin_key: str) -> dict[str, float]:
    """An instance's ``/metrics``: each sample's value by its name and labels
    (``leaderboard_cache_hits_total``, ``leaderboard_dynamodb_calls_total{operation=Query}``)."""
    headers = {"Authorization": f"Bearer {admin_key}"}
    async with http.get(f"{base}/metrics", headers=headers) as response:
        response.raise_for_status()
        text = await response.text()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return values


def bucket_quantile(values: dict[str, float], histogram: str, q: float) -> float | None:
    """The upper bound of the bucket of ``histogram`` (scraped by :func:`scrape`) that holds
    its ``q`` quantile: infinity past the last bound; None without samples."""
    prefix = f"{histogram}_bucket{{le="
    buckets = sorted(
        (float(name[len(prefix) : -1]), count)
        for name, count in values.items()
        if name.startswith(prefix)
    )
    total = buckets[-1][1] if buckets else 0.0
    if total <= 0:
        return None
    return next(bound for bound, count in buckets if count >= q * total)
