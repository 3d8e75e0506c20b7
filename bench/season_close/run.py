"""Running the benchmark: for each number of entrants a fresh in-memory DynamoDB Local, a board
ended an hour ago loaded into a new table, its close timed step by step with the units its calls
consumed, then a few reads of its final standings beside a page of the live board, and the
table's storage by kind.

The board is loaded with BatchWriteItem (:func:`bench.core.loading.load_with_batch_writes`),
item for item what creating each player and submitting its first play leaves: the player, its
e-mail claim, its session, its entry guard and its Score item; one play per player, scores
from 0 to a third of the entrants (so that many entrants share a score). The close is the
dynamo layer's own :func:`~dynamo.closing.close_board`, the one ``leaderboard close-periods``
runs, on a DynamoDB client of its own whose calls are counted (:mod:`bench.season_close.units`).
The load warms DynamoDB Local up before the close is timed.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from bench.core.loading import load_with_batch_writes
from bench.core.report import log
from bench.core.servers import dynamodb_per_size
from bench.core.stack import CREDENTIALS, CURSOR_SECRET, LOADER_CONFIG, REGION
from bench.core.workload import BOARD_ID, plays
from bench.season_close.storage import Storage, table_storage
from bench.season_close.units import OPEN, ConsumedUnits, Mark, StepClock, Units
from dynamo.closing import CloseProgress, Phase, close_board
from dynamo.db import Db
from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, Period, close_due
from dynamo.results import RESULT, board_results, get_results, player_results
from dynamo.scores import top_scores
from dynamo.table import create_table
from leaderboard.backend import open_table
from leaderboard.config import Settings
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = [
    "STEPS",
    "CloseRun",
    "ReadResult",
    "SeasonCloseError",
    "StepResult",
    "measure",
    "run",
]

STEPS = {
    Phase.COUNTS.value: "beginning, freezing counts",
    Phase.ENTRIES.value: "freezing entries",
    Phase.RESULTS.value: "writing results",
}
"""The steps of a close as the report names them, in order; the first includes the close's
beginning (its first reads of the board and the update that stops plays)."""
PAGE = 100
"""Entries of a page of the final standings or of the live board (``first`` at most 100)."""


class SeasonCloseError(AssertionError):
    """The closed board is not what it should be."""


@dataclass(frozen=True)
class StepResult:
    step: str
    seconds: float
    units: Units


@dataclass(frozen=True)
class ReadResult:
    """One read of the closed board and the units it consumed."""

    read: str
    items: int
    units: Units


@dataclass(frozen=True)
class CloseRun:
    """The close of one board."""

    entrants: int
    partitions: int
    loaded_items: int
    load_seconds: float
    close_seconds: float
    entrants_per_second: float
    load_average: tuple[float, float]
    """The machine's load average over a minute as the close began and as it ended: the
    machine is shared with whatever else runs on it."""
    steps: list[StepResult]
    units: Units
    """Every call of the close and the units they consumed."""
    storage: Storage
    reads: list[ReadResult]


def _board(entrants: int, partitions: int) -> LeaderboardItem:
    ended = now() - timedelta(hours=1)
    return LeaderboardItem(
        leaderboard_id=BOARD_ID,
        name="Benchmark season",
        period=Period.SEASON,
        partitions=partitions,
        created_at=ended - timedelta(days=30),
        starts_at=ended - timedelta(days=30),
        ends_at=ended,
        close_due=close_due(ended),
    )


@asynccontextmanager
async def _clients(endpoint_url: str, table: str) -> AsyncIterator[tuple[Db, Db]]:
    """Two DynamoDB clients on ``table``: the benchmark's own (loading, scanning), and the
    close's, whose calls are counted."""
    settings = Settings(
        endpoint_url=endpoint_url, region=REGION, table=table, cursor_secret=CURSOR_SECRET
    )
    async with (
        open_table(settings, CREDENTIALS, config=LOADER_CONFIG) as own,
        open_table(settings, CREDENTIALS, config=LOADER_CONFIG) as closing,
    ):
        yield own, closing


def _logger(label: str, started: float) -> Callable[[CloseProgress], None]:
    """A progress callback logging each step's start and every tenth of it."""
    shown: set[tuple[str, int]] = set()

    def report(progress: CloseProgress) -> None:
        if progress.phase == Phase.FINAL or not progress.total:
            return
        tenth = 10 * progress.done // progress.total
        if (progress.phase, tenth) in shown:
            return
        shown.add((progress.phase, tenth))
        log(
            f"{label} {STEPS[progress.phase]}: {progress.done:,}/{progress.total:,}"
            f" after {time.perf_counter() - started:.1f} s"
        )

    return report


def _steps(marks: Sequence[Mark], started: float, ended: float, total: Units) -> list[StepResult]:
    """Each step from the moment the board first read in it to the next one's (the first step
    from the close's start, the last until its end)."""
    found: list[StepResult] = []
    for n, mark in enumerate(marks):
        if mark.step not in STEPS:
            continue
        at, units = (started, Units()) if n == 0 else (mark.at, mark.units)
        until, by = (marks[n + 1].at, marks[n + 1].units) if n + 1 < len(marks) else (ended, total)
        found.append(StepResult(STEPS[mark.step], round(until - at, 2), by.since(units)))
    return found


async def _read(
    label: str, consumed: ConsumedUnits, read: Callable[[], Awaitable[int]]
) -> ReadResult:
    before = consumed.snapshot()
    items = await read()
    return ReadResult(label, items, consumed.snapshot().since(before))


async def _reads(db: Db, consumed: ConsumedUnits, board: LeaderboardItem) -> list[ReadResult]:
    """The final standings' first page, one player's result and results, and the live board's
    top page, each read once as the service reads them."""
    first = await board_results(db, BOARD_ID, PAGE, None)
    player = first.items[0].player_id

    async def standings() -> int:
        return len((await board_results(db, BOARD_ID, PAGE, None)).items)

    async def one_result() -> int:
        return sum(r is not None for r in await get_results(db, [(player, BOARD_ID)]))

    async def players_results() -> int:
        return len((await player_results(db, player, 10, None)).items)

    async def live_top() -> int:
        return len((await top_scores(db, board, PAGE, None)).items)

    parts = f" (one Query per partition, {board.partitions})" if board.partitions > 1 else ""
    return [
        await _read(f"the final standings, a page of {PAGE} (GSI2)", consumed, standings),
        await _read("one player's result on the board", consumed, one_result),
        await _read("a player's results, newest period first (GSI1)", consumed, players_results),
        await _read(f"the live board's top {PAGE}, for comparison{parts}", consumed, live_top),
    ]


async def measure(endpoint_url: str, entrants: int, partitions: int, seed: int) -> CloseRun:
    """Load a board of ``entrants`` on ``partitions`` partitions into a new table in the
    DynamoDB at ``endpoint_url``, close it, and measure the close, the reads and the storage."""
    label = f"[season close {entrants:,}, N = {partitions}]"
    table = f"season-close-{entrants}-{uuid.uuid4().hex[:8]}"
    board = _board(entrants, partitions)
    async with _clients(endpoint_url, table) as (own, closing):
        await create_table(own.client, table)
        log(f"{label} loading ...")
        begun = time.perf_counter()
        await load_with_batch_writes(own, board, plays(entrants, random.Random(seed)))
        load_seconds = time.perf_counter() - begun
        log(f"{label} loaded in {load_seconds:.0f} s; closing ...")
        consumed = ConsumedUnits(closing.client)
        clock = StepClock(closing.client, BOARD_ID, consumed)
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        closed = await close_board(closing, BOARD_ID, at=now(), progress=_logger(label, started))
        ended = time.perf_counter()
        load_after = os.getloadavg()[0]
        total = consumed.snapshot()
        if closed.final_count != entrants or closed.closed_at is None:
            raise SeasonCloseError(f"{label} closed with {closed.final_count} entrants")
        seconds = ended - started
        log(f"{label} closed in {seconds:.1f} s; reading and scanning ...")
        steps = _steps([m for m in clock.marks if m.step != OPEN], started, ended, total)
        reads = await _reads(closing, consumed, closed)
        storage = await table_storage(own.client, table)
        results = sum(k.items for k in storage.kinds if k.kind == RESULT.name)
        if results != entrants:
            raise SeasonCloseError(f"{label} {results} Result items for {entrants} entrants")
    return CloseRun(
        entrants=entrants,
        partitions=partitions,
        loaded_items=sum(k.items for k in storage.kinds if k.kind != RESULT.name),
        load_seconds=round(load_seconds, 1),
        close_seconds=round(seconds, 2),
        entrants_per_second=round(entrants / seconds, 1),
        load_average=(round(load_before, 2), round(load_after, 2)),
        steps=steps,
        units=total,
        storage=storage,
        reads=reads,
    )


def run(
    cache_dir: Path,
    entries: Sequence[int],
    partitions: int,
    seed: int,
    on_start: Callable[[EmbeddedDynamoDB], None],
) -> list[CloseRun]:
    """Measure a close of each number of ``entries``, each on a DynamoDB Local of its own;
    ``on_start`` sees each one once it answers."""
    runs: list[CloseRun] = []
    for size, local in dynamodb_per_size(entries, cache_dir):
        on_start(local)
        runs.append(asyncio.run(measure(local.endpoint_url, size, partitions, seed + size)))
    return runs
