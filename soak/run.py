"""One soak run: a fresh table, the service served on it (a fleet of ``leaderboard serve``
processes, or instances in this process), the world set up, the clients run until the
deadline while probes and observers measure staleness, then the table checked exactly."""

from __future__ import annotations

import asyncio
import math
import os
import random
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.core.measure import percentiles
from bench.core.report import log
from bench.core.stack import (
    ADMIN_KEY,
    API_KEY,
    CREDENTIALS,
    LOADER_CONFIG,
    served_app,
    served_settings,
)
from dynamo.db import Db
from dynamo.table import create_table
from leaderboard.backend import open_table
from leaderboard.config import Limits
from soak.client import GraphQLClient, Stats
from soak.fleet import fleet
from soak.invariants import Snapshot, Violation, check, scan_items, snapshot
from soak.ledger import Ledger
from soak.moderation import ModerationConfig
from soak.rank_index import IndexCheck, Projection, projected_index, verify_index
from soak.report import SoakResult, table_counts
from soak.staleness import Probe, Staleness, judge
from soak.watch import (
    Observers,
    ProbeWriter,
    WatchConfig,
    bucket_quantile,
    scrape,
    setup_probes,
)
from soak.workload import Workload, WorkloadConfig, player_ids, setup

__all__ = ["SoakConfig", "soak"]

FEED_DELAY = "leaderboard_change_feed_delay_seconds"

ANSWER_MARGIN_SECONDS = 15.0
"""How long past the instances' request deadline a client waits for an answer. Every request
is answered by its deadline (past it, with a typed error), so a client that gives up only
after it and this margin reports as ``TRANSPORT_ERROR`` an answer that never came, never a
slow one of a loaded machine."""


@dataclass(frozen=True)
class SoakConfig:
    seconds: float = 180.0
    clients: int = 12
    instances: int = 2
    """Service instances on the one table; with more than one, plays of one player race in
    DynamoDB, not only in one process's per-player queue."""
    players: int = 200
    hot_players: int = 6
    hot_share: float = 0.7
    write_share: float = 0.2
    seed: int = 1
    progress_every: float = 15.0
    moderation: ModerationConfig = field(default_factory=ModerationConfig)
    """How often the clients remove entries, ban hot players and erase players."""
    index_reads: bool = True
    """With the rank index: the instances answer ranks from it (else only its projection of
    the table is checked)."""
    limits: Limits = field(default_factory=Limits)
    """The instances' limits: the service's defaults unless given."""
    environment: dict[str, str] = field(default_factory=dict)
    """Further settings of the fleet's processes, as environment variables
    (``LEADERBOARD_CACHE_MAX_SECONDS``, say)."""
    fleet: bool = True
    """Serve with ``leaderboard serve`` processes (each with ``workers`` workers and a rank
    indexer; needs Redis); else with instances in this process."""
    workers: int = 2
    """Worker processes of each instance of the fleet."""
    watch: WatchConfig = field(default_factory=WatchConfig)
    """The staleness probes and observers (with Redis); a bound of 0 leaves them out."""


async def _progress(stats: Stats, started: float, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        elapsed = time.monotonic() - started
        p50, _, p99 = percentiles(stats.all_latencies()[-5000:])
        unexpected = sum(stats.unexpected_errors.values())
        log(
            f"[{elapsed:5.0f} s] {stats.requests:,} requests ({stats.requests / elapsed:.0f}/s),"
            f" recent p50 {p50:.1f} ms p99 {p99:.1f} ms, unexpected errors {unexpected}"
        )


@dataclass(frozen=True)
class Served:
    """An instance the clients use: its name, GraphQL URL and where its metrics are."""

    name: str
    url: str
    base: str
    pid: int | None = None
    workers: tuple[int, ...] = ()


@dataclass
class Drive:
    """What the load phase did and saw."""

    workload: Workload
    seconds: float
    metrics: list[dict[str, float]]
    """Each instance's metrics, as counted during the load (the end's minus the start's)."""
    staleness: Staleness | None
    subscriptions: int = 0


async def _metrics(http: aiohttp.ClientSession, served: Sequence[Served]) -> list[dict[str, float]]:
    return [await scrape(http, s.base, ADMIN_KEY) for s in served]


async def _clients(config: SoakConfig, workload: Workload, started: float) -> None:
    await asyncio.gather(
        *(
            workload.run_client(random.Random(config.seed * 1000 + i), started + config.seconds)
            for i in range(config.clients)
        )
    )


async def _load(
    config: SoakConfig, workload: Workload, *, watch: bool
) -> tuple[float, list[Probe]]:
    """Run the clients (and, with ``watch``, the probes) until the deadline; how long they
    ran, and the probes acknowledged."""
    log(f"running {config.clients} clients for {config.seconds:g} s")
    started = time.monotonic()
    workload.moderation.start(started, config.seconds)
    progress = asyncio.create_task(_progress(workload.client.stats, started, config.progress_every))
    writer = ProbeWriter(workload.submit)
    stop_probes = asyncio.Event()
    if not watch:
        stop_probes.set()
    probing = asyncio.create_task(
        writer.run(config.watch.probe_every, stop_probes, warmup=config.watch.warmup)
    )
    try:
        await _clients(config, workload, started)
    finally:
        progress.cancel()
        stop_probes.set()
        await probing
    return time.monotonic() - started, writer.probes


async def _drive(
    config: SoakConfig, served: Sequence[Served], stats: Stats, ledger: Ledger, *, watch: bool
) -> Drive:
    """Set the world up, then run the clients (and, with ``watch``, the probes and the
    observers) until the deadline; the observers go on for the bound past the last probe."""
    connector = aiohttp.TCPConnector(limit=config.clients * 4)
    timeout = aiohttp.ClientTimeout(total=config.limits.request_deadline + ANSWER_MARGIN_SECONDS)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        urls = [s.url for s in served]
        client = GraphQLClient(http, urls, API_KEY, stats, admin_key=ADMIN_KEY)
        log(f"setting up {config.players} players, boards and families")
        await setup(client, player_ids(config.players))
        if watch:
            await setup_probes(client)
        stats.ops.clear()
        workload = Workload(client, _workload_config(config), ledger)
        observers = Observers(stats, API_KEY, config.watch)
        try:
            if watch:
                await observers.start([(s.name, s.url) for s in served])
            before = await _metrics(http, served)
            seconds, probes = await _load(config, workload, watch=watch)
            if watch:
                await asyncio.sleep(config.watch.bound + 1.0)
        finally:
            await observers.stop()
        after = await _metrics(http, served)
    staleness = judge(probes, observers.seen, bound=config.watch.bound) if watch else None
    deltas = [
        {k: v - b.get(k, 0.0) for k, v in a.items()} for a, b in zip(after, before, strict=True)
    ]
    return Drive(workload, seconds, deltas, staleness, observers.subscriptions)


def _workload_config(config: SoakConfig) -> WorkloadConfig:
    return WorkloadConfig(
        players=config.players,
        hot_players=config.hot_players,
        hot_share=config.hot_share,
        write_share=config.write_share,
        moderation=config.moderation,
    )


@dataclass
class Checked:
    """The table's final state, checked."""

    snap: Snapshot
    violations: list[Violation]
    broken: list[Violation]
    index: IndexCheck | None = None


async def _check(config: SoakConfig, db: Db, ledger: Ledger) -> Checked:
    log("scanning the table and checking every invariant")
    items = await scan_items(db.client, db.table)
    snap = snapshot(items)
    violations = check(snap, single_writer=config.instances == 1)
    return Checked(snap, violations, ledger.check(snap, items))


async def _in_process(
    config: SoakConfig,
    endpoint_url: str,
    table: str,
    redis_url: str | None,
    ledger: Ledger,
    stats: Stats,
) -> tuple[Drive, Checked, list[Served]]:
    async with AsyncExitStack() as stack:
        apps = [
            await stack.enter_async_context(
                served_app(
                    endpoint_url,
                    table,
                    redis_url=redis_url if config.index_reads else None,
                    limits=config.limits,
                )
            )
            for _ in range(config.instances)
        ]
        db = apps[0].db
        projection: Projection | None = None
        if redis_url is not None:
            projection = await stack.enter_async_context(
                projected_index(db, endpoint_url, redis_url)
            )
        served = [
            Served(f"instance {n}", app.url, app.url.removesuffix("/graphql"))
            for n, app in enumerate(apps, 1)
        ]
        watch = redis_url is not None and config.index_reads and config.watch.bound > 0
        drive = await _drive(config, served, stats, ledger, watch=watch)
        checked = await _check(config, db, ledger)
        if projection is not None:
            log("draining the stream into the rank index and verifying every board")
            checked.index = await projection.verify(sorted(checked.snap.boards))
        await db.client.delete_table(TableName=table)
    return drive, checked, served


@contextmanager
def _log_folder(keep_in: Path | None, table: str) -> Iterator[Path]:
    """A folder for the fleet's logs: ``keep_in/<table>``, kept; else a temporary one,
    removed on leaving."""
    if keep_in is not None:
        folder = keep_in / table
        folder.mkdir(parents=True)
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="soak-fleet-") as temporary:
        yield Path(temporary)


async def _fleet(
    config: SoakConfig,
    endpoint_url: str,
    table: str,
    redis_url: str,
    ledger: Ledger,
    stats: Stats,
    log_dir: Path | None,
) -> tuple[Drive, Checked, list[Served]]:
    settings = served_settings(endpoint_url, table, redis_url=redis_url)
    async with open_table(settings, CREDENTIALS, config=LOADER_CONFIG) as db:
        await create_table(db.client, table)
        with _log_folder(log_dir, table) as logs:
            log(
                f"starting {config.instances} instances of {config.workers} workers"
                f" (leaderboard serve) and their rank indexers; logs in {logs}"
            )
            async with fleet(
                endpoint_url,
                table=table,
                redis_url=redis_url,
                log_dir=logs,
                instances=config.instances,
                workers=config.workers,
                limits=config.limits,
                environment=config.environment,
            ) as instances:
                served = [Served(i.name, i.url, i.base, i.pid, i.workers) for i in instances]
                drive = await _drive(config, served, stats, ledger, watch=config.watch.bound > 0)
            log("stopped the fleet")
        checked = await _check(config, db, ledger)
        log("draining the stream into the rank index and verifying every board")
        checked.index = await verify_index(db, endpoint_url, redis_url, sorted(checked.snap.boards))
        await db.client.delete_table(TableName=table)
    return drive, checked, served


def _instance_lines(served: Sequence[Served], drive: Drive) -> list[dict[str, Any]]:
    rows = []
    for s, metrics in zip(served, drive.metrics, strict=True):
        hits = metrics.get("leaderboard_cache_hits_total", 0.0)
        misses = metrics.get("leaderboard_cache_misses_total", 0.0)
        rows.append(
            {
                "name": s.name,
                "url": s.url,
                "pid": s.pid,
                "workers": list(s.workers),
                "cache_hits": int(hits),
                "cache_misses": int(misses),
                "cache_hit_ratio": round(hits / (hits + misses), 3) if hits + misses else 0.0,
                "change_feed_notices": int(metrics.get("leaderboard_change_feed_notices_total", 0)),
                "change_feed_resyncs": int(metrics.get("leaderboard_change_feed_resyncs_total", 0)),
                "change_feed_delay_p50_at_most_s": _bound(
                    bucket_quantile(metrics, FEED_DELAY, 0.5)
                ),
                "change_feed_delay_p99_at_most_s": _bound(
                    bucket_quantile(metrics, FEED_DELAY, 0.99)
                ),
            }
        )
    return rows


def _bound(seconds: float | None) -> float | str | None:
    """A histogram bucket's bound for the JSON document: past the last one, ``+Inf``."""
    return "+Inf" if seconds == math.inf else seconds


def _calls(drive: Drive) -> dict[str, int]:
    prefix = "leaderboard_dynamodb_calls_total{operation="
    calls: Counter[str] = Counter()
    for metrics in drive.metrics:
        for name, value in metrics.items():
            if name.startswith(prefix):
                calls[name[len(prefix) : -1]] += int(value)
    return {k: v for k, v in sorted(calls.items()) if v}


async def soak(
    config: SoakConfig,
    endpoint_url: str,
    machine: dict[str, object],
    *,
    redis_url: str | None = None,
    log_dir: Path | None = None,
) -> SoakResult:
    """Run the soak against a fresh table in the DynamoDB at ``endpoint_url``: on a fleet of
    ``leaderboard serve`` processes (``config.fleet``, which needs ``redis_url``) or on
    instances in this process. With ``redis_url`` the rank index in that Redis follows the
    table's stream, the instances answer ranks from it (in process: with
    ``config.index_reads``), their caches and subscribers are checked for staleness, and at
    the end every board's index is verified against the table. The fleet's processes log into
    a folder of ``log_dir``, kept, else into a temporary folder."""
    table = f"soak-{uuid.uuid4().hex[:8]}"
    load_at_start = os.getloadavg()[0]
    stats, ledger = Stats(), Ledger()
    log(f"table {table}")
    if config.fleet:
        if redis_url is None:
            raise ValueError("the fleet needs Redis (its change feed, cache and rank index)")
        drive, checked, served = await _fleet(
            config, endpoint_url, table, redis_url, ledger, stats, log_dir
        )
    else:
        drive, checked, served = await _in_process(
            config, endpoint_url, table, redis_url, ledger, stats
        )
    calls = _calls(drive)
    workload, acks = drive.workload, ledger.acks
    return SoakResult(
        settings=asdict(config),
        machine={
            **machine,
            "load_average": [round(load_at_start, 2), round(os.getloadavg()[0], 2)],
        },
        seconds=drive.seconds,
        stats=stats,
        submissions={
            "acknowledged": len(acks),
            "duplicates": sum(1 for a in acks if a.duplicate),
            "refused": len(ledger.refused),
            "unknown": ledger.unknown,
            "overlapping": workload.overlapping,
            "max_in_flight": workload.max_in_flight,
            "transactions": calls.get("TransactWriteItems", 0),
        },
        moderation=dict(workload.moderation.counts),
        table=table_counts(checked.snap),
        dynamodb_calls=calls,
        invariant_violations=checked.violations,
        ledger_violations=checked.broken,
        rank_index=checked.index.document() if checked.index is not None else None,
        instances=_instance_lines(served, drive),
        staleness=drive.staleness.document() if drive.staleness is not None else None,
        subscriptions=drive.subscriptions,
    )
