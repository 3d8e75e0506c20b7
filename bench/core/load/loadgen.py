"""The mixed workload's load generator: closed-loop clients sending the frontend's operations
over HTTP, in worker processes of their own.

Each client sends one request, waits for its answer, and sends the next at once, for the
warm-up and then the measured window. A request's latency is recorded when it completes inside
the window; its kind is drawn from :data:`MIX` (80% reads, 20% submissions). Every response is
checked: an HTTP status other than 200, a GraphQL error, a payload error or a missing result
counts as an error under its code, whenever it happens (warm-up included).

With a floor target (:attr:`WorkerPlan.floor`) the same clients, drawing the same kinds and
variables, send each request as the raw calls the service would make for it
(:mod:`bench.core.load.floor`): the floor of the design, timed and recorded alike.

:func:`run_worker` is the entry point of one worker process; it takes a picklable
:class:`WorkerPlan` and returns a picklable :class:`WorkerResult`.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.core.documents import PLAYER_RANK, PLAYER_SESSIONS, example_operation
from bench.core.load.floor import FloorTarget, floor_sender
from bench.core.workload import BOARD_ID, GAMES, PROFILE_BOARDS, TOP_N

__all__ = [
    "MIX",
    "REQUEST_TIMEOUT_SECONDS",
    "Kind",
    "Mix",
    "WorkerPlan",
    "WorkerResult",
    "forwarded_address",
    "kinds",
    "mark_window",
    "run_worker",
    "window_cpu_seconds",
]

REQUEST_TIMEOUT_SECONDS = 30.0

Mix = tuple[tuple[str, int], ...]
"""Request kinds (names of :func:`kinds`) and their weights."""

MIX: Mix = (
    ("leaderboard page", 20),
    ("profile page", 20),
    ("around me", 15),
    ("sessions", 15),
    ("rank", 10),
    ("submitScore", 20),
)
"""Request kinds and their weights in percent: 80% reads, 20% submissions."""


@dataclass(frozen=True)
class WorkerPlan:
    """What one worker process runs: its clients, the timing and the population to draw from.

    ``start_at`` is a wall-clock time (``time.time()``) shared by every worker of a level, so
    that their windows line up."""

    url: str
    api_key: str
    clients: int
    first_client: int
    """The number of this worker's first client among all (seeds each client's choices)."""
    start_at: float
    warmup_seconds: float
    duration_seconds: float
    seed: int
    players: list[str]
    """Every loaded player (reads and submissions draw from them)."""
    profile_players: list[str]
    """Players with an entry on every profile board."""
    top_score: int
    network: int | None = None
    """With a number, each client claims an address of its own in ``10.<network>.0.0/16`` in
    X-Forwarded-For (see :func:`forwarded_address`), as clients behind a load balancer do."""
    mix: Mix = MIX
    """The kinds the clients draw from, with their weights."""
    floor: FloorTarget | None = None
    """With a target, each request is sent as the raw calls the service would make for it
    (:mod:`bench.core.load.floor`) instead of to the service at ``url``."""


def forwarded_address(network: int, client: int) -> str:
    """The address client number ``client`` of ``network`` (0 to 255) claims."""
    return f"10.{network}.{client // 256 % 256}.{client % 256}"


@dataclass
class WorkerResult:
    """The latencies (ms) of the requests completed in the window, by kind; errors by kind
    and code; and the worker's own CPU seconds over the window."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, dict[str, int]] = field(default_factory=dict)
    """Every failed request of the level (warm-up included), by kind and code."""
    window_errors: int = 0
    """Failed requests completed inside the window."""
    error_samples: list[str] = field(default_factory=list)
    """The first few error responses, for diagnosis."""
    cpu_seconds: float = 0.0
    window_seconds: float = 0.0
    started_late: float = 0.0
    """How late after ``start_at`` the worker began (seconds)."""


Check = Callable[[Any], str | None]
"""Looks at a response's ``data``; an error code, or None when it holds what was asked for."""


@dataclass(frozen=True)
class Kind:
    """One kind of request: its document, operation name, variables and response check."""

    name: str
    query: str
    operation: str
    variables: Callable[[random.Random], dict[str, Any]]
    check: Check


def _not_null(*path: str) -> Check:
    def check(data: Any) -> str | None:
        node = data
        for key in path:
            if not isinstance(node, dict) or node.get(key) is None:
                return "NULL_RESULT"
            node = node[key]
        return None

    return check


def _submitted(data: Any) -> str | None:
    payload = (data or {}).get("submitScore")
    if payload is None:
        return "NULL_RESULT"
    if payload.get("errors"):
        return str(payload["errors"][0].get("code") or "USER_ERROR")
    if payload.get("session") is None or len(payload.get("entries") or []) != len(PROFILE_BOARDS):
        return "INCOMPLETE_PAYLOAD"
    return None


def kinds(plan: WorkerPlan) -> dict[str, Kind]:
    """Every request kind of :data:`MIX`, drawing its variables from ``plan``'s players."""
    players, profiled = plan.players, plan.profile_players
    return {
        "leaderboard page": Kind(
            "leaderboard page",
            example_operation("LeaderboardPage"),
            "LeaderboardPage",
            lambda rng: {"leaderboardId": BOARD_ID, "first": TOP_N},
            _not_null("leaderboard", "topScores"),
        ),
        "profile page": Kind(
            "profile page",
            example_operation("PlayerProfile"),
            "PlayerProfile",
            lambda rng: {
                "playerId": rng.choice(profiled),
                "leaderboardIds": list(PROFILE_BOARDS),
                "mainLeaderboardId": BOARD_ID,
            },
            _not_null("player", "entry"),
        ),
        "around me": Kind(
            "around me",
            example_operation("AroundMe"),
            "AroundMe",
            lambda rng: {"leaderboardId": BOARD_ID, "playerId": rng.choice(players)},
            _not_null("leaderboard", "around"),
        ),
        "sessions": Kind(
            "sessions",
            PLAYER_SESSIONS,
            "PlayerSessions",
            lambda rng: {"playerId": rng.choice(players)},
            _not_null("player", "sessions"),
        ),
        "rank": Kind(
            "rank",
            PLAYER_RANK,
            "PlayerRank",
            lambda rng: {"playerId": rng.choice(players), "leaderboardId": BOARD_ID},
            _not_null("player", "rank"),
        ),
        "submitScore": Kind(
            "submitScore",
            example_operation("SubmitScore"),
            "SubmitScore",
            lambda rng: {
                "playerId": rng.choice(players),
                "gameId": rng.choice(GAMES),
                "score": rng.randint(0, plan.top_score),
                "durationSec": rng.randint(30, 900),
                "submissionId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "leaderboardIds": list(PROFILE_BOARDS),
            },
            _submitted,
        ),
    }


Send = Callable[[Kind, random.Random, dict[str, str]], Awaitable[tuple[str | None, str]]]
"""Sends one request of a kind (its variables drawn from the random generator, with the
client's own headers); awaits to its error code (None when it succeeded) and a short
description."""


async def _send(
    http: aiohttp.ClientSession,
    plan: WorkerPlan,
    kind: Kind,
    rng: random.Random,
    headers: dict[str, str],
) -> tuple[str | None, str]:
    """Send one request; its error code (None when it succeeded) and a short description."""
    body = {
        "query": kind.query,
        "operationName": kind.operation,
        "variables": kind.variables(rng),
    }
    try:
        async with http.post(plan.url, json=body, headers=headers) as response:
            status = response.status
            answer: Any = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as error:
        return type(error).__name__, repr(error)[:300]
    if isinstance(answer, dict) and answer.get("errors"):
        first = answer["errors"][0]
        code = (first.get("extensions") or {}).get("code") or "GRAPHQL_ERROR"
        return str(code), str(first.get("message"))[:300]
    if status != 200:
        return f"HTTP_{status}", str(answer)[:300]
    problem = kind.check(answer.get("data") if isinstance(answer, dict) else None)
    return problem, "" if problem is None else str(answer)[:300]


async def mark_window(window_start: float, window_end: float, cpu: dict[str, float]) -> None:
    """Note this process's CPU time in ``cpu`` at ``window_start`` and at ``window_end``
    (``time.perf_counter()`` times)."""
    await asyncio.sleep(max(0.0, window_start - time.perf_counter()))
    cpu["start"] = time.process_time()
    await asyncio.sleep(max(0.0, window_end - time.perf_counter()))
    cpu["end"] = time.process_time()


def window_cpu_seconds(cpu: dict[str, float]) -> float:
    """The CPU seconds between the two times :func:`mark_window` noted."""
    return cpu.get("end", time.process_time()) - cpu.get("start", 0.0)


@asynccontextmanager
async def _sender(plan: WorkerPlan) -> AsyncIterator[Send]:
    """How this worker's clients send: over HTTP to the service, one pool of keep-alive
    connections; or, with ``plan.floor``, as the raw calls on one DynamoDB and one Redis
    client."""
    if plan.floor is not None:
        async with floor_sender(plan.floor) as raw:

            async def send_raw(
                kind: Kind, rng: random.Random, headers: dict[str, str]
            ) -> tuple[str | None, str]:
                code = await raw(kind.name, kind.variables(rng))
                return code, "" if code is None else f"raw calls: {code}"

            yield send_raw
        return
    connector = aiohttp.TCPConnector(limit=plan.clients, force_close=False)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_SECONDS)
    auth = {"Authorization": f"Bearer {plan.api_key}"}
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, headers=auth) as http:

        async def send_http(
            kind: Kind, rng: random.Random, headers: dict[str, str]
        ) -> tuple[str | None, str]:
            return await _send(http, plan, kind, rng, headers)

        yield send_http


async def _run(plan: WorkerPlan) -> WorkerResult:
    result = WorkerResult()
    mix = kinds(plan)
    names = [name for name, _ in plan.mix]
    weights = [weight for _, weight in plan.mix]
    errors: dict[str, Counter[str]] = {name: Counter() for name in names}
    latencies: dict[str, list[float]] = {name: [] for name in names}

    await asyncio.sleep(max(0.0, plan.start_at - time.time()))
    result.started_late = max(0.0, time.time() - plan.start_at)
    begin = time.perf_counter() - result.started_late
    window_start = begin + plan.warmup_seconds
    window_end = window_start + plan.duration_seconds

    cpu: dict[str, float] = {}

    async def client(number: int, send: Send) -> None:
        rng = random.Random(plan.seed * 1_000_003 + number)
        headers = (
            {"X-Forwarded-For": forwarded_address(plan.network, number)}
            if plan.network is not None
            else {}
        )
        while time.perf_counter() < window_end:
            kind = mix[rng.choices(names, weights)[0]]
            started = time.perf_counter()
            code, detail = await send(kind, rng, headers)
            done = time.perf_counter()
            inside = window_start <= done < window_end
            if code is not None:
                errors[kind.name][code] += 1
                result.window_errors += inside
                if len(result.error_samples) < 5:
                    result.error_samples.append(f"{kind.name}: {code}: {detail}")
            elif inside:
                latencies[kind.name].append((done - started) * 1000)

    async with _sender(plan) as send:
        await asyncio.gather(
            mark_window(window_start, window_end, cpu),
            *(client(plan.first_client + i, send) for i in range(plan.clients)),
        )
    result.latencies = latencies
    result.errors = {name: dict(c) for name, c in errors.items() if c}
    result.cpu_seconds = window_cpu_seconds(cpu)
    result.window_seconds = plan.duration_seconds
    return result


def run_worker(plan: WorkerPlan) -> WorkerResult:
    """Run ``plan``'s clients in this process until the end of its window."""
    return asyncio.run(_run(plan))
