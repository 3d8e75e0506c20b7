"""Running the hot board: a fresh DynamoDB Local, the fault proxy applying the conflict rule in
front of it, ``leaderboard serve --workers 1`` talking to DynamoDB through the proxy; the
players and the families written directly; an unrecorded pre-warm; then each case's burst and
steady state, the proxy's counts reset before each phase and copied after it."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.core.load.seeding import create_table_at
from bench.core.processes import service_process
from bench.core.report import log, machine_info
from bench.hot_board.cases import Case, cases, player_ids, seats
from bench.hot_board.clients import burst, phase_stats, steady
from bench.hot_board.conflicts import summarize
from bench.hot_board.proxy import ConflictProxy, ThreadedProxy
from bench.hot_board.results import CaseResult, HotBoardResult, PhaseResult
from bench.hot_board.table import create_families, create_players, entry_counts, open_direct
from dynamo.db import Db
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = ["WARM", "HotOptions", "Plan", "measure_cases", "prepare", "run"]

WARM = Case(1, 1)
"""The pre-warm's board (a family of its own)."""
_CLIENT_TIMEOUT = aiohttp.ClientTimeout(total=120)


@dataclass(frozen=True)
class HotOptions:
    clients: int
    players: int
    """Players per client."""
    partitions: tuple[int, ...]
    """The one-board cases' partitions."""
    boards: int
    """The boards the spread case plays on (none when below 2)."""
    duration: float
    """Seconds of each steady state."""
    prewarm: float
    hold: float
    """Seconds each transaction holds its items at the proxy."""
    seed: int
    out: Path

    def settings(self) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "players_per_client": self.players,
            "players": self.clients * self.players,
            "partitions": list(self.partitions),
            "spread_boards": self.boards,
            "steady_seconds": self.duration,
            "prewarm_seconds": self.prewarm,
            "hold_seconds": self.hold,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class Plan:
    """What one run plays: its cases, each with its families, and the players."""

    cases: list[tuple[Case, list[str]]]
    warm: list[str]
    players: list[str]
    clients: int

    @classmethod
    def of(cls, options: HotOptions, tag: str) -> Plan:
        return cls(
            cases=[(c, c.family_ids(tag)) for c in cases(options.partitions, options.boards)],
            warm=WARM.family_ids(f"{tag}-warm"),
            players=player_ids(options.clients, options.players),
            clients=options.clients,
        )


async def prepare(db: Db, plan: Plan) -> None:
    """The players, and every case's families (and the pre-warm's)."""
    await create_players(db, plan.players)
    await create_families(db, plan.warm, WARM.partitions)
    for case, families in plan.cases:
        await create_families(db, families, case.partitions)


async def _case(
    http: aiohttp.ClientSession,
    url: str,
    proxy: ConflictProxy,
    db: Db,
    plan: Plan,
    case: Case,
    families: Sequence[str],
    *,
    seconds: float,
    seed: int,
) -> CaseResult:
    seated = seats(plan.players, plan.clients, families)
    await proxy.reset()
    first = await burst(http, url, seated, seed=seed)
    burst_phase = PhaseResult("burst", phase_stats(first), summarize(await proxy.counts()))
    await proxy.reset()
    then = await steady(http, url, seated, seconds=seconds, seed=seed + 1)
    steady_phase = PhaseResult("steady", phase_stats(then), summarize(await proxy.counts()))
    entered = phase_stats([*first, *then]).entered
    return CaseResult(
        name=case.name,
        boards=case.boards,
        partitions=case.partitions,
        burst=burst_phase,
        steady=steady_phase,
        entry_counts=await entry_counts(db, list(entered)),
        entered=entered,
    )


async def measure_cases(
    url: str,
    proxy: ConflictProxy,
    db: Db,
    plan: Plan,
    *,
    seconds: float,
    prewarm: float,
    seed: int,
    notes: list[str],
) -> list[CaseResult]:
    """The pre-warm (``prewarm`` seconds of plays on a board of its own, unrecorded), then
    each case in turn: its burst, its steady state of ``seconds``, its boards' counts."""
    connector = aiohttp.TCPConnector(limit=plan.clients + 4)
    async with aiohttp.ClientSession(connector=connector, timeout=_CLIENT_TIMEOUT) as http:
        if prewarm > 0:
            warm = phase_stats(
                await steady(
                    http,
                    url,
                    seats(plan.players, plan.clients, plan.warm),
                    seconds=prewarm,
                    seed=seed - 1,
                )
            )
            if warm.errors:
                notes.append(f"The unrecorded pre-warm had failed plays: {warm.errors}.")
        results = []
        for number, (case, families) in enumerate(plan.cases):
            result = await _case(
                http,
                url,
                proxy,
                db,
                plan,
                case,
                families,
                seconds=seconds,
                seed=seed + 10 * (number + 1),
            )
            log(_line(result))
            if len(result.entered) != case.boards:
                notes.append(
                    f"{case.name}: the plays entered {len(result.entered)} boards"
                    f" ({', '.join(result.entered)}) where the case has {case.boards}: the day"
                    " (UTC) changed during the case, and its next board began."
                )
            results.append(result)
    return results


def _line(result: CaseResult) -> str:
    b, s = result.burst, result.steady
    return (
        f"[hot board] {result.name}: burst {b.plays.acknowledged}/{b.plays.plays} plays,"
        f" {b.plays.plays_per_second:.1f}/s, {b.conflicts.conflicts} conflicts"
        f" ({b.conflicts.on_count_shards} on count shards); steady"
        f" {s.plays.acknowledged}/{s.plays.plays} plays, {s.plays.plays_per_second:.1f}/s,"
        f" p99 {s.plays.p99_ms:.0f} ms, {s.conflicts.conflicts} conflicts; errors"
        f" {b.plays.errors or {}} / {s.plays.errors or {}}"
    )


async def _measure(
    endpoint_url: str, table: str, url: str, proxy: ThreadedProxy, options: HotOptions, plan: Plan
) -> tuple[list[CaseResult], list[str]]:
    notes: list[str] = []
    async with open_direct(endpoint_url, table) as db:
        await prepare(db, plan)
        results = await measure_cases(
            url,
            proxy,
            db,
            plan,
            seconds=options.duration,
            prewarm=options.prewarm,
            seed=options.seed,
            notes=notes,
        )
    return results, notes


def run(options: HotOptions) -> HotBoardResult:
    """Start the stack, play every case, and return the results."""
    started = time.perf_counter()
    tag = uuid.uuid4().hex[:6]
    table = f"hot-{tag}"
    plan = Plan.of(options, tag)
    with ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-hot-")))
        local = stack.enter_context(EmbeddedDynamoDB(default_cache_dir()))
        machine = machine_info(local)
        proxy = stack.enter_context(ThreadedProxy(local.endpoint_url, hold=options.hold))
        asyncio.run(create_table_at(local.endpoint_url, table))
        service = stack.enter_context(
            service_process(proxy.url, table=table, redis_url=None, log_dir=logs, workers=1)
        )
        log(f"[hot board] service pid {service.pid} at {service.url}, proxy at {proxy.url}")
        results, notes = asyncio.run(
            _measure(local.endpoint_url, table, service.url, proxy, options, plan)
        )
    notes.append(f"Load average (1 min) at the end: {os.getloadavg()[0]:.2f}.")
    return HotBoardResult(
        machine=machine,
        settings=options.settings(),
        cases=results,
        total_seconds=time.perf_counter() - started,
        notes=notes,
    )
