"""Throughput and latency of a mixed frontend workload against the service run as its own
process, at several numbers of concurrent clients.

``python -m bench.mixed [--clients 1 8 32 64] [--duration 20] [--warmup 5] [--entries 10000]
[--ranks index|count] [--generators 1] [--prewarm 10] [--profile 32]
[--out bench/results]``

The benchmark starts a fresh in-memory DynamoDB Local and, with ``--ranks index`` (the
default, the configuration the README recommends for boards of this size), redis-server and
``leaderboard rank-indexer`` (the stream projector, a process of its own as the Lambda is on
AWS). It creates a table and loads the main board with ``--entries`` players, a season board
with a quarter of them and a daily board with a twentieth (:mod:`bench.workload`, written with
BatchWriteItem, item for item what the submission path writes), builds the rank index of each
board and waits until the projector has caught up. Then it starts ``leaderboard serve`` on that
table in a process of its own, configured through the environment (``LEADERBOARD_*``).

After an unrecorded pre-warm (``--prewarm`` seconds at 8 clients: the service's and DynamoDB
Local's caches and JIT), for each number of clients, closed-loop clients
(:mod:`bench.loadgen`, in ``--generators`` worker processes) send the frontend's operations
for ``--warmup`` seconds and then for the measured ``--duration``: the leaderboard page
(``LeaderboardPage``, first 100), the profile page (``PlayerProfile`` on the three boards),
around-me (``AroundMe``), a player's sessions and rank, and ``SubmitScore`` (a play entering all
three boards, with a fresh submission id): 80% reads, 20% submissions
(:data:`bench.loadgen.MIX`). Recorded: requests per second,
p50/p95/p99 overall and per kind, errors by code, the service's resident memory (``VmRSS``
sampled every 0.25 s, and ``VmHWM``, its peak) and the CPU time of every process involved
(service, DynamoDB Local, Redis, projector, load generator) and of the whole machine, as cores
kept busy over the window.

With ``--profile N`` one more level of N clients runs with ``py-spy record`` attached to the
service for its window; the samples and a summary of the hot spots are written beside the
results (:mod:`bench.hotspots`).

Writes ``mixed.json`` and ``mixed.md`` (with "Against the targets") to ``--out``, and the
charts of :mod:`bench.charts`.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aioboto3
from aiobotocore.config import AioConfig
from redis import Redis as SyncRedis
from redis.asyncio import Redis

from bench.hotspots import HotspotReport, finish_profile, profile_process
from bench.loadgen import MIX, WorkerPlan, WorkerResult, run_worker
from bench.loading import load_boards_with_batch_writes
from bench.measure import percentiles
from bench.processes import ServiceProcess, dynamodb_local_pid, rank_indexer, service_process
from bench.procstat import MachineTimes, cpu_seconds, machine_times, memory_kib
from bench.rank_stack import wait_in_sync
from bench.report import log, machine_info
from bench.stack import API_KEY, CREDENTIALS, CURSOR_SECRET, REGION
from bench.workload import PROFILE_BOARDS, LoadedPlayer, new_boards, plays
from dynamo.cursors import CursorCodec
from dynamo.table import Db, create_table
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from leaderboard.embedded_redis import EmbeddedRedis
from rankindex.index import RankIndex
from rankindex.keys import board_keys

__all__ = [
    "KindStats",
    "LevelResult",
    "MixedResult",
    "Options",
    "Pids",
    "Seeded",
    "Stack",
    "level_line",
    "main",
    "measure_level",
    "run",
    "running_stack",
    "settings_of",
    "setup_of",
]

SYNC_TIMEOUT_SECONDS = 300.0
PREWARM_CLIENTS = 8
RSS_SAMPLE_SECONDS = 0.25
_LOADER_CONFIG = AioConfig(
    retries={"mode": "standard", "max_attempts": 10},
    connect_timeout=5,
    read_timeout=120,
    max_pool_connections=64,
)
"""The benchmark's own client for loading: patient, so a slow bulk write is waited for."""


# -- results -------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class MixedResult:
    machine: dict[str, Any]
    settings: dict[str, Any]
    setup: dict[str, Any]
    levels: list[LevelResult]
    service_peak_rss_mib: float
    service_log_bytes: int
    total_seconds: float
    hotspots: HotspotReport | None = None
    notes: list[str] = field(default_factory=list)


# -- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    clients: list[int]
    duration: float
    warmup: float
    entries: int
    ranks: str
    """``index`` (Redis rank index and its projector) or ``count`` (COUNT queries)."""
    generators: int
    seed: int
    out: Path
    profile: int | None
    prewarm: float = 10.0
    """Seconds of unrecorded load at PREWARM_CLIENTS clients before the first level."""
    network: int | None = None
    """With a number, each client claims an X-Forwarded-For address of its own in
    ``10.<network>.0.0/16`` (see :func:`bench.loadgen.forwarded_address`)."""


def _parse(argv: Sequence[str] | None) -> Options:
    parser = argparse.ArgumentParser(
        prog="python -m bench.mixed",
        description="Throughput and latency of a mixed frontend workload (80%% reads, 20%%"
        " submissions) against `leaderboard serve` in its own process, at several numbers of"
        " concurrent clients.",
    )
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds a level")
    parser.add_argument("--warmup", type=float, default=5.0, help="unrecorded seconds first")
    parser.add_argument("--entries", type=int, default=10_000, help="players on the main board")
    parser.add_argument(
        "--ranks",
        choices=["index", "count"],
        default="index",
        help="ranks from the Redis rank index (default) or from COUNT queries",
    )
    parser.add_argument(
        "--generators", type=int, default=1, help="load-generator processes (at most clients)"
    )
    parser.add_argument(
        "--prewarm",
        type=float,
        default=10.0,
        help=f"unrecorded seconds at {PREWARM_CLIENTS} clients before the first level (the"
        " service's and DynamoDB Local's caches and JIT)",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--profile",
        type=int,
        default=None,
        metavar="CLIENTS",
        help="one more level of CLIENTS clients with py-spy attached to the service",
    )
    args = parser.parse_args(argv)
    if min(args.clients) < 1 or args.entries < 20 or args.generators < 1:
        parser.error("--clients and --generators must be positive, --entries at least 20")
    if args.duration <= 0 or args.warmup < 0 or args.prewarm < 0:
        parser.error("--duration must be positive, --warmup and --prewarm not negative")
    return Options(
        clients=args.clients,
        duration=args.duration,
        warmup=args.warmup,
        entries=args.entries,
        ranks=args.ranks,
        generators=args.generators,
        seed=args.seed,
        out=args.out,
        profile=args.profile,
        prewarm=args.prewarm,
    )


# -- setting up ----------------------------------------------------------------------------


def _client(endpoint_url: str) -> Any:
    """The benchmark's own DynamoDB client (an async context manager)."""
    return aioboto3.Session().client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=REGION,
        config=_LOADER_CONFIG,
        aws_access_key_id=CREDENTIALS[0],
        aws_secret_access_key=CREDENTIALS[1],
    )


async def _create_table(endpoint_url: str, table: str) -> None:
    async with _client(endpoint_url) as client:
        await create_table(client, table)


@dataclass(frozen=True)
class Seeded:
    players: list[LoadedPlayer]
    board_entries: dict[str, int]
    load_seconds: float
    index_seconds: float
    sync_seconds: float
    items: int


async def _seed(
    endpoint_url: str, table: str, entries: int, redis_url: str | None, rng: random.Random
) -> Seeded:
    """Load the boards; with the rank index, rebuild each board's index and wait until the
    projector has caught up, then check that the index holds every entry."""
    boards = new_boards()
    board_plays = plays(entries, rng, extra_boards=True)
    counts = Counter(b for p in board_plays for b in p.leaderboard_ids)
    async with _client(endpoint_url) as client:
        db = Db(client=client, table=table, cursors=CursorCodec(CURSOR_SECRET))
        started = time.perf_counter()
        loaded = await load_boards_with_batch_writes(db, boards, board_plays)
        load_seconds = time.perf_counter() - started
        log(f"[mixed] loaded {entries:,} players in {load_seconds:.1f} s")
        index_seconds = sync_seconds = 0.0
        if redis_url is not None:
            redis = Redis.from_url(redis_url)
            try:
                index = RankIndex(redis, table)
                started = time.perf_counter()
                for board in boards:
                    await index.rebuild(db, board.leaderboard_id)
                index_seconds = time.perf_counter() - started
                sync_seconds = await wait_in_sync(redis, table, SYNC_TIMEOUT_SECONDS)
                for board in boards:
                    zset = board_keys(table, board.leaderboard_id)[0]
                    held = await redis.zcard(zset)
                    if held != counts[board.leaderboard_id]:
                        raise RuntimeError(
                            f"the index of {board.leaderboard_id} holds {held} entries,"
                            f" not {counts[board.leaderboard_id]}"
                        )
            finally:
                await redis.aclose()
            log(
                f"[mixed] index rebuilt in {index_seconds:.1f} s, in sync after"
                f" {sync_seconds:.1f} s"
            )
    items = 3 * entries + 2 * sum(counts.values())
    return Seeded(
        loaded, dict(counts), load_seconds, index_seconds, sync_seconds, items + len(boards)
    )


# -- measuring -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pids:
    service: int
    dynamodb_local: int | None
    rank_indexer: int | None
    redis_url: str | None


def _cpu_snapshot(pids: Pids, redis: SyncRedis | None) -> dict[str, float]:
    snapshot = {"service": cpu_seconds(pids.service), "driver": time.process_time()}
    if pids.dynamodb_local is not None:
        snapshot["dynamodb_local"] = cpu_seconds(pids.dynamodb_local)
    if pids.rank_indexer is not None:
        snapshot["rank_indexer"] = cpu_seconds(pids.rank_indexer)
    if redis is not None:
        info: Any = redis.info("cpu")
        snapshot["redis"] = float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    return snapshot


def _plans(
    clients: int, generators: int, *, url: str, options: Options, seeded: Seeded, level: int
) -> list[WorkerPlan]:
    workers = max(1, min(generators, clients))
    shares = [clients // workers + (1 if i < clients % workers else 0) for i in range(workers)]
    players = [p.player_id for p in seeded.players]
    profiled = [p.player_id for p in seeded.players if p.board_ids == PROFILE_BOARDS]
    start_at = time.time() + 1.0
    plans: list[WorkerPlan] = []
    first = 0
    for share in shares:
        plans.append(
            WorkerPlan(
                url=url,
                api_key=API_KEY,
                clients=share,
                first_client=first,
                start_at=start_at,
                warmup_seconds=options.warmup,
                duration_seconds=options.duration,
                seed=options.seed * 1000 + level,
                players=players,
                profile_players=profiled,
                top_score=max(1, options.entries // 3),
                network=options.network,
            )
        )
        first += share
    return plans


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
) -> tuple[LevelResult, HotspotReport | None, list[Any]]:
    """Run ``clients`` clients for the warm-up and the window and measure them; with
    ``companions``, their tasks run beside the clients and their results are returned too."""
    pool, pids, url = stack.pool, stack.pids, stack.service.url
    plans = _plans(
        clients, options.generators, url=url, options=options, seeded=stack.seeded, level=level
    )
    futures = [pool.submit(run_worker, plan) for plan in plans]
    beside = list(companions(plans[0].start_at)) if companions is not None else []
    redis = SyncRedis.from_url(pids.redis_url) if pids.redis_url else None
    try:
        load_start = os.getloadavg()[0]
        window_start = plans[0].start_at + options.warmup
        time.sleep(max(0.0, window_start - time.time()))
        before, machine_before = _cpu_snapshot(pids, redis), machine_times()
        measured_from = time.perf_counter()
        rss_peak = 0
        window_end = window_start + options.duration
        recorder = None
        if profile_to is not None:
            recorder = profile_process(pids.service, options.duration, profile_to)
        while time.time() < window_end:
            rss_peak = max(rss_peak, memory_kib(pids.service).get("VmRSS", 0))
            time.sleep(min(RSS_SAMPLE_SECONDS, max(0.0, window_end - time.time())))
        after, machine_after = _cpu_snapshot(pids, redis), machine_times()
        elapsed = time.perf_counter() - measured_from
        results: list[WorkerResult] = [f.result() for f in futures]
        companion_results = [f.result() for f in beside]
        hotspots = None
        if recorder is not None and profile_to is not None:
            hotspots = finish_profile(recorder, profile_to, options.duration)
    finally:
        if redis is not None:
            redis.close()
    memory = memory_kib(pids.service)
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
        ),
        hotspots,
        companion_results,
    )


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
) -> LevelResult:
    window = options.duration
    kinds: list[KindStats] = []
    every: list[float] = []
    errors: Counter[str] = Counter()
    samples: list[str] = []
    window_errors = sum(r.window_errors for r in results)
    for name, _ in MIX:
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
    )


def level_line(level: LevelResult, label: str = "mixed") -> str:
    """A progress line summing up ``level``."""
    errors = sum(level.errors.values())
    return (
        f"[{label}] {level.clients:>2} clients: {level.throughput_rps:.0f} req/s,"
        f" p50 {level.p50_ms:.1f} ms, p99 {level.p99_ms:.1f} ms, errors {errors},"
        f" service {level.cpu_cores['service']:.2f} cores,"
        f" RSS {level.service_rss_mib:.0f} MiB" + (" (profiled)" if level.profiled else "")
    )


def _prewarm(pool: Executor, *, url: str, options: Options, seeded: Seeded) -> int:
    """Unrecorded load before the first level; the number of failed requests."""
    if options.prewarm <= 0:
        return 0
    plans = _plans(
        PREWARM_CLIENTS,
        options.generators,
        url=url,
        options=replace(options, warmup=options.prewarm, duration=0.01),
        seeded=seeded,
        level=-1,
    )
    results = [f.result() for f in [pool.submit(run_worker, plan) for plan in plans]]
    return sum(sum(codes.values()) for r in results for codes in r.errors.values())


def _ready() -> bool:
    """A trivial task that makes a worker process start (and import the load generator)."""
    return True


# -- the run -------------------------------------------------------------------------------


@dataclass
class Stack:
    """Everything a level runs against: the service, the processes measured, the loaded
    players, the pool of load-generator processes, and notes for the report."""

    service: ServiceProcess
    pids: Pids
    seeded: Seeded
    machine: dict[str, Any]
    pool: Executor
    notes: list[str]

    def peak_rss_mib(self) -> float:
        """The service's VmHWM so far."""
        return memory_kib(self.service.pid).get("VmHWM", 0) / 1024


@contextmanager
def running_stack(
    options: Options, *, workers: int, environment: Mapping[str, str] | None = None
) -> Iterator[Stack]:
    """A fresh DynamoDB Local (and, with the rank index, redis-server and the projector), the
    boards loaded, ``leaderboard serve`` running with ``environment`` added to its own, and a
    pool of ``workers`` load-generator processes, pre-warmed with ``options.prewarm``
    seconds of load; all stopped on leaving."""
    rng = random.Random(options.seed)
    table = f"mixed-{uuid.uuid4().hex[:8]}"
    notes: list[str] = []
    with ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-mixed-")))
        local = stack.enter_context(EmbeddedDynamoDB(default_cache_dir()))
        machine = machine_info(local)
        redis_url: str | None = None
        if options.ranks == "index":
            redis_server = stack.enter_context(EmbeddedRedis(log_dir=logs))
            redis_url = redis_server.url
            with SyncRedis.from_url(redis_url) as probe:
                info: Any = probe.info("server")
            machine["redis_server"] = str(info.get("redis_version", "unknown"))
        asyncio.run(_create_table(local.endpoint_url, table))
        indexer_pid: int | None = None
        if redis_url is not None:
            indexer_pid = stack.enter_context(
                rank_indexer(local.endpoint_url, table=table, redis_url=redis_url, log_dir=logs)
            )
        seeded = asyncio.run(_seed(local.endpoint_url, table, options.entries, redis_url, rng))
        service = stack.enter_context(
            service_process(
                local.endpoint_url,
                table=table,
                redis_url=redis_url,
                log_dir=logs,
                environment=environment,
            )
        )
        log(f"[mixed] service pid {service.pid} at {service.url}")
        pids = Pids(service.pid, dynamodb_local_pid(), indexer_pid, redis_url)
        if pids.dynamodb_local is None:
            notes.append("DynamoDB Local's process was not found: its CPU is not reported.")
        pool = stack.enter_context(
            ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        )
        for done in [pool.submit(_ready) for _ in range(workers)]:
            done.result()
        failed = _prewarm(pool, url=service.url, options=options, seeded=seeded)
        if failed:
            notes.append(f"{failed} request(s) failed during the unrecorded pre-warm load.")
        yield Stack(service, pids, seeded, machine, pool, notes)


def settings_of(options: Options) -> dict[str, Any]:
    """The settings a report states."""
    return {
        "clients": options.clients,
        "duration_seconds": options.duration,
        "warmup_seconds": options.warmup,
        "entries": options.entries,
        "ranks": options.ranks,
        "generators": options.generators,
        "seed": options.seed,
        "mix_percent": dict(MIX),
        "profile_clients": options.profile,
        "prewarm_seconds": options.prewarm,
        "prewarm_clients": PREWARM_CLIENTS,
    }


def setup_of(seeded: Seeded) -> dict[str, Any]:
    return {
        "boards": seeded.board_entries,
        "items": seeded.items,
        "load_seconds": round(seeded.load_seconds, 1),
        "index_seconds": round(seeded.index_seconds, 1),
        "sync_seconds": round(seeded.sync_seconds, 1),
        "load_method": "BatchWriteItem (every entry)",
    }


def run(options: Options) -> MixedResult:
    """Set up the stack, run every level (and the profiled one, if asked) and return the
    results."""
    started = time.perf_counter()
    workers = max(1, min(options.generators, max(options.clients)))
    with running_stack(options, workers=workers) as stack:
        levels: list[LevelResult] = []
        for number, clients in enumerate(options.clients):
            level, _, _ = measure_level(stack, options, clients, level=number)
            log(level_line(level))
            levels.append(level)
        hotspots: HotspotReport | None = None
        if options.profile is not None:
            options.out.mkdir(parents=True, exist_ok=True)
            level, hotspots, _ = measure_level(
                stack,
                options,
                options.profile,
                level=len(options.clients),
                profile_to=options.out / f"profile-{options.profile}.txt",
            )
            log(level_line(level))
            levels.append(level)
        peak = stack.peak_rss_mib()
        log_bytes = stack.service.log_path.stat().st_size
    return MixedResult(
        machine=stack.machine,
        settings=settings_of(options),
        setup=setup_of(stack.seeded),
        levels=levels,
        service_peak_rss_mib=peak,
        service_log_bytes=log_bytes,
        total_seconds=time.perf_counter() - started,
        hotspots=hotspots,
        notes=stack.notes,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status (1 when any
    request failed)."""
    from bench.charts import write_charts
    from bench.mixed_report import write_results

    options = _parse(argv)
    result = run(options)
    print(write_results(options.out, result), flush=True)
    for path in write_charts(options.out):
        log(f"wrote {path}")
    failed = sum(sum(level.errors.values()) for level in result.levels)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
