"""One soak run: a fresh table, the app served on it, the world set up, the clients run until
the deadline, then the table checked exactly."""

from __future__ import annotations

import asyncio
import os
import random
import time
import uuid
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field

import aiohttp

from bench.core.measure import percentiles
from bench.core.report import log
from bench.core.stack import ADMIN_KEY, API_KEY, served_app
from leaderboard.config import Limits
from soak.client import GraphQLClient, Stats
from soak.invariants import check, scan_items, snapshot
from soak.ledger import Ledger
from soak.moderation import ModerationConfig
from soak.rank_index import Projection, projected_index
from soak.report import SoakResult, table_counts
from soak.workload import Workload, WorkloadConfig, player_ids, setup

__all__ = ["SoakConfig", "soak"]


@dataclass(frozen=True)
class SoakConfig:
    seconds: float = 180.0
    clients: int = 32
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


async def soak(
    config: SoakConfig,
    endpoint_url: str,
    machine: dict[str, object],
    *,
    redis_url: str | None = None,
) -> SoakResult:
    """Run the soak against a fresh table in the DynamoDB at ``endpoint_url``. With
    ``redis_url`` the rank index in that Redis follows the table's stream (and the instances
    answer ranks from it, with ``config.index_reads``), and at the end every board's index is
    verified against the table."""
    table = f"soak-{uuid.uuid4().hex[:8]}"
    load_at_start = os.getloadavg()[0]
    stats, ledger = Stats(), Ledger()
    workload_config = WorkloadConfig(
        players=config.players,
        hot_players=config.hot_players,
        hot_share=config.hot_share,
        write_share=config.write_share,
        moderation=config.moderation,
    )
    async with AsyncExitStack() as stack:
        instances = [
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
        served = instances[0]
        projection: Projection | None = None
        if redis_url is not None:
            projection = await stack.enter_async_context(
                projected_index(served.db, endpoint_url, redis_url)
            )
        connector = aiohttp.TCPConnector(limit=config.clients * 4)
        timeout = aiohttp.ClientTimeout(total=30)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
            client = GraphQLClient(
                http, [i.url for i in instances], API_KEY, stats, admin_key=ADMIN_KEY
            )
            log(f"setting up {config.players} players, boards and families in table {table}")
            await setup(client, player_ids(config.players))
            stats.ops.clear()
            for instance in instances:
                instance.counter.reset()
            workload = Workload(client, workload_config, ledger)
            log(f"running {config.clients} clients for {config.seconds:g} s")
            started = time.monotonic()
            workload.moderation.start(started, config.seconds)
            progress = asyncio.create_task(_progress(stats, started, config.progress_every))
            try:
                await asyncio.gather(
                    *(
                        workload.run_client(
                            random.Random(config.seed * 1000 + i), started + config.seconds
                        )
                        for i in range(config.clients)
                    )
                )
            finally:
                progress.cancel()
            seconds = time.monotonic() - started
        calls: Counter[str] = Counter()
        for instance in instances:
            calls.update(instance.counter.snapshot())
        log("scanning the table and checking every invariant")
        items = await scan_items(served.db.client, table)
        snap = snapshot(items)
        violations = check(snap, single_writer=config.instances == 1)
        broken = ledger.check(snap, items)
        index = None
        if projection is not None:
            log("draining the stream into the rank index and verifying every board")
            index = await projection.verify(sorted(snap.boards))
        await served.db.client.delete_table(TableName=table)
    acks = ledger.acks
    return SoakResult(
        settings=asdict(config),
        machine={
            **machine,
            "load_average": [round(load_at_start, 2), round(os.getloadavg()[0], 2)],
        },
        seconds=seconds,
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
        table=table_counts(snap),
        dynamodb_calls=dict(calls),
        invariant_violations=violations,
        ledger_violations=broken,
        rank_index=index.document() if index is not None else None,
    )
