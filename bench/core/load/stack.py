"""Everything a level of the mixed workload runs against: a fresh DynamoDB Local (and, with the
rank index, redis-server and the projector), the boards loaded, ``leaderboard serve`` in its own
process, and a pool of load-generator processes, pre-warmed; and the plans that split a level's
clients over the load generators."""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.core.load.floor import FloorTarget
from bench.core.load.loadgen import MIX, Mix, WorkerPlan, run_worker
from bench.core.load.options import PREWARM_CLIENTS, Options
from bench.core.load.seeding import Seeded, create_table_at, seed
from bench.core.processes import ServiceProcess, dynamodb_local_pid, rank_indexer, service_process
from bench.core.procstat import memory_kib
from bench.core.report import log, machine_info
from bench.core.servers import redis_version
from bench.core.stack import API_KEY
from bench.core.workload import PROFILE_BOARDS
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from leaderboard.embedded_redis import EmbeddedRedis

__all__ = [
    "Backends",
    "Pids",
    "Stack",
    "prewarm",
    "running_backends",
    "running_stack",
    "worker_plans",
]


@dataclass(frozen=True)
class Pids:
    """The processes whose CPU a level measures, and the Redis whose CPU it asks for."""

    service: int | None
    """The service's process (its master, with workers); None when no service is measured."""
    dynamodb_local: int | None
    rank_indexer: int | None
    redis_url: str | None


def worker_plans(
    clients: int,
    generators: int,
    *,
    url: str,
    options: Options,
    seeded: Seeded,
    level: int,
    mix: Mix = MIX,
    floor: FloorTarget | None = None,
) -> list[WorkerPlan]:
    """``clients`` split as evenly as may be over at most ``generators`` load-generator
    processes, all starting one second from now, drawing from ``mix``; with ``floor``, they
    send the raw calls instead of requests to ``url``."""
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
                mix=mix,
                floor=floor,
            )
        )
        first += share
    return plans


def prewarm(
    pool: Executor,
    *,
    url: str,
    options: Options,
    seeded: Seeded,
    floor: FloorTarget | None = None,
) -> int:
    """Unrecorded load (``options.prewarm`` seconds at PREWARM_CLIENTS clients); the number
    of failed requests."""
    if options.prewarm <= 0:
        return 0
    plans = worker_plans(
        PREWARM_CLIENTS,
        options.generators,
        url=url,
        options=replace(options, warmup=options.prewarm, duration=0.01),
        seeded=seeded,
        level=-1,
        floor=floor,
    )
    results = [f.result() for f in [pool.submit(run_worker, plan) for plan in plans]]
    return sum(sum(codes.values()) for r in results for codes in r.errors.values())


def _ready() -> bool:
    """A trivial task that makes a worker process start (and import the load generator)."""
    return True


@dataclass
class Stack:
    """Everything a level runs against: the service (None when the level sends the raw calls
    only), the processes measured, the loaded players, the pool of load-generator processes,
    and notes for the report."""

    service: ServiceProcess | None
    pids: Pids
    seeded: Seeded
    machine: dict[str, Any]
    pool: Executor
    notes: list[str]

    @property
    def serving(self) -> ServiceProcess:
        """The service (a stack without one has none to give)."""
        if self.service is None:
            raise RuntimeError("this stack runs no service")
        return self.service

    def peak_rss_mib(self) -> float:
        """The service's VmHWM so far."""
        return memory_kib(self.serving.pid).get("VmHWM", 0) / 1024


@dataclass
class Backends:
    """What the service runs on, started once: DynamoDB Local and its loaded table (and, with
    the rank index, Redis and the projector), the pool of load-generator processes, the
    folder of the processes' logs, and notes for the report."""

    endpoint_url: str
    table: str
    redis_url: str | None
    pids: Pids
    """The processes measured, without a service (``service`` is None)."""
    seeded: Seeded
    machine: dict[str, Any]
    pool: Executor
    logs: Path
    notes: list[str]

    def floor(self) -> FloorTarget:
        """Where the raw calls go (the rank index must be on)."""
        if self.redis_url is None:
            raise RuntimeError("the raw calls read ranks from the rank index: run with Redis")
        return FloorTarget(self.endpoint_url, self.table, self.redis_url)

    def with_service(self, service: ServiceProcess | None) -> Stack:
        """A stack of these backends and ``service`` (None: the raw calls only)."""
        pids = replace(self.pids, service=service.pid if service is not None else None)
        return Stack(service, pids, self.seeded, self.machine, self.pool, self.notes)


@contextmanager
def running_backends(options: Options, *, workers: int) -> Iterator[Backends]:
    """A fresh DynamoDB Local (and, with the rank index, redis-server and the projector),
    the boards loaded, and a pool of ``workers`` load-generator processes, started; all
    stopped on leaving."""
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
            machine["redis_server"] = redis_version(redis_url)
        asyncio.run(create_table_at(local.endpoint_url, table))
        indexer_pid: int | None = None
        if redis_url is not None:
            indexer_pid = stack.enter_context(
                rank_indexer(local.endpoint_url, table=table, redis_url=redis_url, log_dir=logs)
            )
        seeded = asyncio.run(seed(local.endpoint_url, table, options.entries, redis_url, rng))
        pids = Pids(None, dynamodb_local_pid(), indexer_pid, redis_url)
        if pids.dynamodb_local is None:
            notes.append("DynamoDB Local's process was not found: its CPU is not reported.")
        pool = stack.enter_context(
            ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        )
        for done in [pool.submit(_ready) for _ in range(workers)]:
            done.result()
        yield Backends(
            local.endpoint_url, table, redis_url, pids, seeded, machine, pool, logs, notes
        )


@contextmanager
def running_stack(
    options: Options, *, workers: int, environment: Mapping[str, str] | None = None
) -> Iterator[Stack]:
    """A fresh DynamoDB Local (and, with the rank index, redis-server and the projector), the
    boards loaded, ``leaderboard serve`` running with ``environment`` added to its own, and a
    pool of ``workers`` load-generator processes, pre-warmed with ``options.prewarm``
    seconds of load; all stopped on leaving."""
    with (
        running_backends(options, workers=workers) as backends,
        service_process(
            backends.endpoint_url,
            table=backends.table,
            redis_url=backends.redis_url,
            log_dir=backends.logs,
            environment=environment,
        ) as service,
    ):
        log(f"[mixed] service pid {service.pid} at {service.url}")
        failed = prewarm(backends.pool, url=service.url, options=options, seeded=backends.seeded)
        if failed:
            backends.notes.append(
                f"{failed} request(s) failed during the unrecorded pre-warm load."
            )
        yield backends.with_service(service)
