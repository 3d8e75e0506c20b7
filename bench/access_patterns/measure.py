"""One operation measured against its raw counterpart, and the result records of an operation
and of a whole board."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field

import aiohttp
from botocore.exceptions import BotoCoreError, ClientError

from bench.access_patterns.operations import Operation
from bench.core.measure import (
    FAILURE_PAUSE_SECONDS,
    BenchError,
    format_calls,
    percentiles,
    post_graphql,
)
from dynamo.metrics import CallCounter

__all__ = ["BoardResult", "OperationResult", "measure"]


@dataclass(frozen=True)
class OperationResult:
    """The latencies and DynamoDB calls of one operation on one board size."""

    name: str
    query: str
    samples: int
    """Measured requests (fewer than asked when the operation's time budget ran out)."""
    p50_ms: float
    p95_ms: float
    p99_ms: float
    raw_p50_ms: float
    raw_p95_ms: float
    raw_p99_ms: float
    ratio: float
    """Service p50 over raw p50."""
    calls: str
    """The DynamoDB calls of the last GraphQL request, e.g. ``GetItem+Query+BatchGetItem``."""
    raw_calls: str
    """The calls of the last raw execution, for comparison."""
    call_patterns: dict[str, int]
    """Every call pattern seen over the measured GraphQL requests, with how often."""
    budget_limited: bool = False
    """Whether the time budget cut the measured requests short."""
    failures: dict[str, int] = field(default_factory=dict)
    """Iterations that failed (not counted in the samples): by the GraphQL error code of the
    request, or ``raw <exception>`` for the raw calls."""


@dataclass(frozen=True)
class BoardResult:
    """One board size: how it was loaded, how long loading and measuring took, and the result
    of every operation."""

    entries: int
    load_method: str
    load_seconds: float
    measure_seconds: float
    operations: list[OperationResult]
    board_entries: dict[str, int] = field(default_factory=dict)
    """The entries of each loaded board, the main board (``entries``) first."""


async def measure(
    op: Operation,
    *,
    http: aiohttp.ClientSession,
    url: str,
    counter: CallCounter,
    rng: random.Random,
    requests: int,
    warmup: int,
    budget_seconds: float | None = None,
    min_requests: int = 10,
    max_failures: int = 3,
) -> OperationResult:
    """Alternate GraphQL request and raw calls on the same variables, swapping which goes
    first on every iteration; the first ``warmup`` iterations are not recorded.

    With ``budget_seconds``, an operation too slow for ``requests`` iterations in that time
    stops early: the warm-up after a fifth of the budget, the measured iterations once the
    budget is spent and at least ``min_requests`` are recorded.

    A GraphQL request that fails (such as a request over the service's time budget, answered
    ``BACKEND_UNAVAILABLE``) is counted by its code, and raw calls that fail (a read timeout of
    the client) by ``raw <exception>``; the iteration is skipped, after a pause that lets a
    tripped circuit breaker close again. After ``max_failures`` the operation is not measured
    further."""
    service: list[float] = []
    raw: list[float] = []
    calls: dict[str, int] = {}
    raw_calls: dict[str, int] = {}
    patterns: Counter[str] = Counter()
    limited = False
    failures: Counter[str] = Counter()
    phase_started = time.perf_counter()
    i = 0
    while i < warmup + requests:
        if budget_seconds is not None:
            spent = time.perf_counter() - phase_started
            if i < warmup and i > 0 and spent > budget_seconds / 5:
                i = warmup
                continue
            if i >= warmup and len(service) >= min_requests and spent > budget_seconds:
                limited = True
                break
        if i == warmup:
            phase_started = time.perf_counter()
        variables = op.pick(rng)
        for via_service in (True, False) if i % 2 == 0 else (False, True):
            counter.reset()
            start = time.perf_counter()
            if via_service:
                try:
                    data = await post_graphql(http, url, op.query, variables)
                except BenchError as error:
                    failures[error.code] += 1
                    await asyncio.sleep(FAILURE_PAUSE_SECONDS)
                    break
            else:
                try:
                    await op.raw(variables)
                except (BotoCoreError, ClientError) as error:
                    failures[f"raw {type(error).__name__}"] += 1
                    await asyncio.sleep(FAILURE_PAUSE_SECONDS)
                    break
            elapsed = (time.perf_counter() - start) * 1000
            snapshot = counter.snapshot()
            if via_service:
                if not op.check(data):
                    raise BenchError(f"{op.name}: unexpected response {json.dumps(data)[:500]}")
                calls = snapshot
            else:
                raw_calls = snapshot
            if i < warmup:
                continue
            if via_service:
                service.append(elapsed)
                patterns[format_calls(snapshot)] += 1
            else:
                raw.append(elapsed)
        if sum(failures.values()) >= max_failures:
            break
        i += 1
    p50, p95, p99 = percentiles(service)
    raw_p50, raw_p95, raw_p99 = percentiles(raw)
    return OperationResult(
        name=op.name,
        query=op.query,
        samples=len(service),
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        raw_p50_ms=raw_p50,
        raw_p95_ms=raw_p95,
        raw_p99_ms=raw_p99,
        ratio=p50 / raw_p50 if p50 and raw_p50 else 0.0,
        calls=format_calls(calls),
        raw_calls=format_calls(raw_calls),
        call_patterns=dict(patterns.most_common()),
        budget_limited=limited,
        failures=dict(failures),
    )
