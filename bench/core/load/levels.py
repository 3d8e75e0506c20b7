"""One level of the mixed workload: a number of closed-loop clients run for a warm-up and a
measured window against the running stack, and what was measured (throughput, latency overall
and per kind, errors, memory, the CPU of every process involved)."""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redis import Redis as SyncRedis

from bench.core.load.cache_metrics import CacheCounts, cache_counts
from bench.core.load.floor import FloorTarget
from bench.core.load.hotspots import HotspotReport, finish_profile, profile_process
from bench.core.load.loadgen import MIX, Mix, WorkerPlan, WorkerResult, run_worker
from bench.core.load.options import Options
from bench.core.load.stack import Pids, Stack, worker_plans
from bench.core.measure import percentiles
from bench.core.processes import ServiceProcess
from bench.core.procstat import (
    MachineTimes,
    cpu_seconds,
    machine_times,
    memory_kib,
    tree_cpu_seconds,
)

__all__ = ["Companions", "KindStats", "LevelResult", "level_line", "measure_level"]

RSS_SAMPLE_SECONDS = 0.25


@dataclass(frozen=True)
class KindStats:
    """One kind of request at one level."""

    kind: str
    requests: int
    """Successful requests completed in the window."""
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    errors: dict[str, int]


@dataclass(frozen=True)
class LevelResult:
    """One number of concurrent clients."""

    clients: int
    generators: int
    window_seconds: float
    requests: int
    """Requests completed in the window (successful and failed)."""
    throughput_rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    kinds: list[KindStats]
    errors: dict[str, int]
    """Failed requests of the whole level (warm-up included), by code."""
    error_samples: list[str]
    cpu_cores: dict[str, float]
    """CPU seconds per second of window: ``service``, ``dynamodb_local``, ``redis``,
    ``rank_indexer``, ``load_generator``, ``driver`` (this process), ``machine`` (every
    process of the machine) and ``other`` (the machine less all of these)."""
    service_rss_mib: float
    """The largest VmRSS sampled during the window."""
    service_hwm_mib: float
    """VmHWM at the end of the level: the peak since the service started."""
    load_average: tuple[float, float]
    """The machine's 1-minute load average at the start and at the end of the level."""
    generator_started_late_ms: float
    """How late the latest worker began after the common start (should be near 0)."""
    profiled: bool = False
    cache_hits: float | None = None
    """Queries the service answered from its response cache in the window (None: not read)."""
    cache_misses: float | None = None
    """Cacheable queries the service ran in the window (None: not read)."""

    @property
    def cache_hit_ratio(self) -> float | None:
        """Hits over cacheable lookups in the window; None without lookups or counts."""
        if self.cache_hits is None or self.cache_misses is None:
            return None
        return CacheCounts(self.cache_hits, self.cache_misses).ratio

    @property
    def service_cpu_ms_per_request(self) -> float | None:
        """The service's CPU time (every process of it) over the requests of the window;
        None without a service or requests."""
        cores = self.cpu_cores.get("service")
        if cores is None or not self.requests:
            return None
        return cores * self.window_seconds / self.requests * 1000


def _cpu_snapshot(pids: Pids, redis: SyncRedis | None) -> dict[str, float]:
    snapshot = {"driver": time.process_time()}
    if pids.service is not None:
        # The master and every worker of the service.
        snapshot["service"] = tree_cpu_seconds(pids.service)
    if pids.dynamodb_local is not None:
        snapshot["dynamodb_local"] = cpu_seconds(pids.dynamodb_local)
    if pids.rank_indexer is not None:
        snapshot["rank_indexer"] = cpu_seconds(pids.rank_indexer)
    if redis is not None:
        info: Any = redis.info("cpu")
        snapshot["redis"] = float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    return snapshot


Companions = Callable[[float], Sequence[Future[Any]]]
"""Work run beside a level's clients: given the level's common start (``time.time()``), it
submits its tasks and returns their futures."""


def measure_level(
    stack: Stack,
    options: Options,
    clients: int,
    *,
    level: int,
    profile_to: Path | None = None,
    companions: Companions | None = None,
    mix: Mix = MIX,
    floor: FloorTarget | None = None,
) -> tuple[LevelResult, HotspotReport | None, list[Any]]:
    """Run ``clients`` clients drawing from ``mix`` for the warm-up and the window and measure
    them (with ``floor``, sending the raw calls rather than requests to the stack's service);
    with ``companions``, their tasks run beside the clients and their results are returned
    too."""
    pool, pids, service = stack.pool, stack.pids, stack.service
    plans = worker_plans(
        clients,
        options.generators,
        url=service.url if service is not None else "",
        options=options,
        seeded=stack.seeded,
        level=level,
        mix=mix,
        floor=floor,
    )
    futures = [pool.submit(run_worker, plan) for plan in plans]
    beside = list(companions(plans[0].start_at)) if companions is not None else []
    redis = SyncRedis.from_url(pids.redis_url) if pids.redis_url else None
    try:
        load_start = os.getloadavg()[0]
        window_start = plans[0].start_at + options.warmup
        time.sleep(max(0.0, window_start - time.time()))
        cache_before = _cache_counts(service)
        before, machine_before = _cpu_snapshot(pids, redis), machine_times()
        measured_from = time.perf_counter()
        rss_peak = 0
        window_end = window_start + options.duration
        recorder = None
        if profile_to is not None and pids.service is not None:
            recorder = profile_process(pids.service, options.duration, profile_to)
        while time.time() < window_end:
            rss_peak = max(rss_peak, _rss_kib(pids.service))
            time.sleep(min(RSS_SAMPLE_SECONDS, max(0.0, window_end - time.time())))
        after, machine_after = _cpu_snapshot(pids, redis), machine_times()
        elapsed = time.perf_counter() - measured_from
        cache_after = _cache_counts(service)
        results: list[WorkerResult] = [f.result() for f in futures]
        companion_results = [f.result() for f in beside]
        hotspots = None
        if recorder is not None and profile_to is not None:
            hotspots = finish_profile(recorder, profile_to, options.duration)
    finally:
        if redis is not None:
            redis.close()
    memory = memory_kib(pids.service) if pids.service is not None else {}
    cache = (
        cache_after.since(cache_before)
        if cache_before is not None and cache_after is not None
        else None
    )
    return (
        _summarize(
            clients,
            plans,
            results,
            options,
            before,
            after,
            elapsed,
            machine_before,
            machine_after,
            rss_peak,
            memory.get("VmHWM", 0),
            (load_start, os.getloadavg()[0]),
            profiled=profile_to is not None,
            cache=cache,
        ),
        hotspots,
        companion_results,
    )


def _rss_kib(pid: int | None) -> int:
    return memory_kib(pid).get("VmRSS", 0) if pid is not None else 0


def _cache_counts(service: ServiceProcess | None) -> CacheCounts | None:
    """The service's response-cache counters now; None without a service or when its
    metrics cannot be read."""
    if service is None:
        return None
    try:
        return cache_counts(service.metrics_url)
    except (OSError, ValueError):
        return None


def _summarize(
    clients: int,
    plans: Sequence[WorkerPlan],
    results: Sequence[WorkerResult],
    options: Options,
    before: dict[str, float],
    after: dict[str, float],
    elapsed: float,
    machine_before: MachineTimes,
    machine_after: MachineTimes,
    rss_peak_kib: int,
    hwm_kib: int,
    load_average: tuple[float, float],
    *,
    profiled: bool,
    cache: CacheCounts | None = None,
) -> LevelResult:
    window = options.duration
    kinds: list[KindStats] = []
    every: list[float] = []
    errors: Counter[str] = Counter()
    samples: list[str] = []
    window_errors = sum(r.window_errors for r in results)
    for name, _ in plans[0].mix:
        latencies = [x for r in results for x in r.latencies.get(name, [])]
        kind_errors: Counter[str] = Counter()
        for r in results:
            kind_errors.update(r.errors.get(name, {}))
        errors.update(kind_errors)
        every.extend(latencies)
        p50, p95, p99 = percentiles(latencies)
        kinds.append(
            KindStats(
                kind=name,
                requests=len(latencies),
                p50_ms=p50,
                p95_ms=p95,
                p99_ms=p99,
                mean_ms=statistics.fmean(latencies) if latencies else 0.0,
                errors=dict(kind_errors),
            )
        )
    for r in results:
        samples.extend(r.error_samples)
    # CPU over the time between the two snapshots; the generator's own over its window.
    cores = {name: (after[name] - before[name]) / elapsed for name in after}
    cores["load_generator"] = sum(r.cpu_seconds for r in results) / window
    cores["machine"] = machine_after.busy_cores(machine_before)
    ours = sum(v for k, v in cores.items() if k != "machine")
    cores["other"] = max(0.0, cores["machine"] - ours)
    p50, p95, p99 = percentiles(every)
    requests = len(every) + window_errors
    return LevelResult(
        clients=clients,
        generators=len(plans),
        window_seconds=window,
        requests=requests,
        throughput_rps=requests / window,
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        mean_ms=statistics.fmean(every) if every else 0.0,
        kinds=kinds,
        errors=dict(errors),
        error_samples=samples[:5],
        cpu_cores={k: round(v, 3) for k, v in cores.items()},
        service_rss_mib=rss_peak_kib / 1024,
        service_hwm_mib=hwm_kib / 1024,
        load_average=load_average,
        generator_started_late_ms=max(r.started_late for r in results) * 1000,
        profiled=profiled,
        cache_hits=cache.hits if cache is not None else None,
        cache_misses=cache.misses if cache is not None else None,
    )


def level_line(level: LevelResult, label: str = "mixed") -> str:
    """A progress line summing up ``level``."""
    errors = sum(level.errors.values())
    service = level.cpu_cores.get("service")
    return (
        f"[{label}] {level.clients:>2} clients: {level.throughput_rps:.0f} req/s,"
        f" p50 {level.p50_ms:.1f} ms, p99 {level.p99_ms:.1f} ms, errors {errors}"
        + (
            f", service {service:.2f} cores, RSS {level.service_rss_mib:.0f} MiB"
            if service is not None
            else ""
        )
        + (" (profiled)" if level.profiled else "")
    )
