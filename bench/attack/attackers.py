"""Anonymous attackers: closed-loop clients sending one of the costliest documents the limits
admit (:mod:`bench.attack.documents`) as fast as they are answered, each from an address of its
own (X-Forwarded-For), in a worker process of their own.

Every answer is counted by its HTTP status and its first error's code (``200 OK`` when there
is none): ``429 THROTTLED`` is a request refused for want of points in the attacker's
allowance, ``503 SERVICE_OVERLOADED`` one refused by admission. A request that ran reports the
DynamoDB calls it made in ``extensions.cost``.

:func:`run_attackers` is the entry point of the worker process; :func:`probe` sends a document
a few times, one request at a time, to see what it costs the service.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.core.load.loadgen import (
    REQUEST_TIMEOUT_SECONDS,
    forwarded_address,
    mark_window,
    window_cpu_seconds,
)

__all__ = [
    "OK",
    "Answer",
    "AttackPlan",
    "AttackerResult",
    "ProbeResult",
    "probe",
    "run_attackers",
]

OK = "200 OK"


@dataclass(frozen=True)
class AttackPlan:
    url: str
    attackers: int
    network: int
    """Attacker ``i`` claims ``forwarded_address(network, i)``."""
    body: dict[str, Any]
    """The request every attacker sends."""
    start_at: float
    """Wall-clock time (``time.time()``) of the level's common start."""
    warmup_seconds: float
    duration_seconds: float


@dataclass
class AttackerResult:
    """What the attackers got in the measured window."""

    outcomes: dict[str, int] = field(default_factory=dict)
    """Answers by ``"<status> <code>"``."""
    latencies: dict[str, list[float]] = field(default_factory=dict)
    """Milliseconds of each answer, by outcome."""
    dynamodb_calls: int = 0
    """DynamoDB calls of the requests that ran, as they reported them."""
    cpu_seconds: float = 0.0
    """The worker process's own CPU time over the window."""


@dataclass(frozen=True)
class Answer:
    outcome: str
    dynamodb_calls: int
    milliseconds: float


async def _send(
    http: aiohttp.ClientSession, url: str, body: dict[str, Any], address: str
) -> Answer:
    started = time.perf_counter()
    try:
        async with http.post(url, json=body, headers={"X-Forwarded-For": address}) as response:
            status = response.status
            answer: Any = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as error:
        return Answer(type(error).__name__, 0, (time.perf_counter() - started) * 1000)
    elapsed = (time.perf_counter() - started) * 1000
    code = "OK"
    calls = 0
    if isinstance(answer, dict):
        errors = answer.get("errors") or []
        if errors:
            code = str((errors[0].get("extensions") or {}).get("code") or "GRAPHQL_ERROR")
        cost = (answer.get("extensions") or {}).get("cost") or {}
        calls = int(cost.get("dynamodbCalls") or 0)
    return Answer(f"{status} {code}", calls, elapsed)


async def _attack(plan: AttackPlan) -> AttackerResult:
    result = AttackerResult()
    outcomes: Counter[str] = Counter()
    latencies: dict[str, list[float]] = {}
    await asyncio.sleep(max(0.0, plan.start_at - time.time()))
    window_start = time.perf_counter() + plan.warmup_seconds
    window_end = window_start + plan.duration_seconds
    cpu: dict[str, float] = {}

    async def attacker(number: int, http: aiohttp.ClientSession) -> None:
        address = forwarded_address(plan.network, number)
        while time.perf_counter() < window_end:
            answer = await _send(http, plan.url, plan.body, address)
            if window_start <= time.perf_counter() < window_end:
                outcomes[answer.outcome] += 1
                latencies.setdefault(answer.outcome, []).append(answer.milliseconds)
                result.dynamodb_calls += answer.dynamodb_calls

    connector = aiohttp.TCPConnector(limit=plan.attackers)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_SECONDS)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        await asyncio.gather(
            mark_window(window_start, window_end, cpu),
            *(attacker(i + 1, http) for i in range(plan.attackers)),
        )
    result.outcomes = dict(outcomes)
    result.latencies = latencies
    result.cpu_seconds = window_cpu_seconds(cpu)
    return result


def run_attackers(plan: AttackPlan) -> AttackerResult:
    """Run ``plan``'s attackers in this process until the end of its window."""
    return asyncio.run(_attack(plan))


@dataclass(frozen=True)
class ProbeResult:
    """One document sent ``len(answers)`` times, one at a time, each from a fresh address."""

    name: str
    cost: int
    answers: list[Answer]


async def _probe(
    url: str, name: str, cost: int, body: dict[str, Any], network: int, times: int
) -> ProbeResult:
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_SECONDS)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        answers = [
            await _send(http, url, body, forwarded_address(network, i + 1)) for i in range(times)
        ]
    return ProbeResult(name, cost, answers)


def probe(
    url: str, *, name: str, cost: int, body: dict[str, Any], network: int, times: int
) -> ProbeResult:
    """Send ``body`` ``times`` times in a row, each time from another address of
    ``network`` (so no allowance runs out), and return the answers."""
    return asyncio.run(_probe(url, name, cost, body, network, times))
