"""One kind measured once: a warm-up, then a number of requests sent one at a time, the
service process's CPU time (user and system, its threads and any child included, from
``/proc``) read just before the first and just after the last, each request's wall-clock
time at the client, and, with the response cache, its hits and misses from ``/metrics``
before and after."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

import aiohttp

from bench.core.load.cache_metrics import CacheCounts, cache_counts
from bench.core.measure import BenchError, percentiles, post_graphql
from bench.core.procstat import tree_cpu_seconds
from bench.cpu.kinds import Kind
from bench.cpu.stack import Served

__all__ = ["Sample", "measure_kind", "send"]


@dataclass(frozen=True)
class Sample:
    """One kind in one round."""

    kind: str
    round: int
    requests: int
    cpu_seconds: float
    """The service process's CPU time over the requests."""
    cpu_ms_per_request: float
    wall_p50_ms: float
    """The median of the requests' wall-clock times at the client."""
    cache_hits: int | None = None
    """Answers from the response cache among the requests (None without a cache)."""
    cache_misses: int | None = None


async def send(http: aiohttp.ClientSession, served: Served, kind: Kind, n: int) -> None:
    """Send the ``n``-th request of ``kind`` (with the benchmark's API key) and check its
    answer; BenchError when it failed or answered something else."""
    data = await post_graphql(http, served.service.url, kind.query, kind.variables(n))
    if not kind.check(data):
        raise BenchError(f"{kind.key}: unexpected answer {json.dumps(data)[:500]}")


async def _counts(served: Served) -> CacheCounts | None:
    if not served.configuration.cache:
        return None
    return await asyncio.to_thread(cache_counts, served.service.metrics_url)


async def measure_kind(
    http: aiohttp.ClientSession,
    served: Served,
    kind: Kind,
    *,
    warmup: int,
    requests: int,
    first: int,
    round_number: int,
) -> Sample:
    """``warmup`` unmeasured requests of ``kind``, then ``requests`` measured ones, numbered
    from ``first`` (which picks their variables)."""
    for n in range(first, first + warmup):
        await send(http, served, kind, n)
    before = await _counts(served)
    walls: list[float] = []
    pid = served.service.pid
    cpu_before = tree_cpu_seconds(pid)
    for n in range(first + warmup, first + warmup + requests):
        started = time.perf_counter()
        await send(http, served, kind, n)
        walls.append((time.perf_counter() - started) * 1000)
    cpu_seconds = tree_cpu_seconds(pid) - cpu_before
    after = await _counts(served)
    lookups = after.since(before) if after is not None and before is not None else None
    return Sample(
        kind=kind.key,
        round=round_number,
        requests=requests,
        cpu_seconds=cpu_seconds,
        cpu_ms_per_request=1000 * cpu_seconds / requests if requests else 0.0,
        wall_p50_ms=percentiles(walls)[0],
        cache_hits=round(lookups.hits) if lookups is not None else None,
        cache_misses=round(lookups.misses) if lookups is not None else None,
    )
