"""Running the benchmark: for each board size a fresh DynamoDB Local and table, the app served
on it, the boards loaded and every operation measured."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import aiohttp

from bench.access_patterns.measure import BoardResult, OperationResult, measure
from bench.access_patterns.operations import SHARDED_ID, operations, sharded_board
from bench.access_patterns.report import board_markdown
from bench.core.loading import loader_for
from bench.core.report import log
from bench.core.servers import drop_table, dynamodb_per_size
from bench.core.stack import served_app
from bench.core.workload import new_boards, plays
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = ["bench_board", "run"]


async def bench_board(
    endpoint_url: str,
    entries: int,
    *,
    requests: int,
    warmup: int,
    budget_seconds: float | None,
    rng: random.Random,
) -> BoardResult:
    """Load a fresh table with the main board of ``entries`` players (and the season and daily
    boards a part of them also play on, and the write-sharded board every one of them also
    plays on) and measure every operation."""
    table = f"bench-{entries}-{uuid.uuid4().hex[:8]}"
    async with served_app(endpoint_url, table) as served:
        db, counter = served.db, served.counter
        boards = [*new_boards(), sharded_board()]
        board_plays = [
            replace(p, leaderboard_ids=(*p.leaderboard_ids, SHARDED_ID))
            for p in plays(entries, rng, extra_boards=True)
        ]
        method, load = loader_for(entries)
        log(f"[{entries:,} entries] loading with {method} ...")
        started = time.perf_counter()
        loaded = await load(db, boards, board_plays)
        load_seconds = time.perf_counter() - started
        log(f"[{entries:,} entries] loaded in {load_seconds:.1f} s")
        board_entries = Counter(b for p in board_plays for b in p.leaderboard_ids)

        results: list[OperationResult] = []
        started = time.perf_counter()
        async with aiohttp.ClientSession() as http:
            for op in operations(db, boards, loaded, entries):
                result = await measure(
                    op,
                    http=http,
                    url=served.url,
                    counter=counter,
                    rng=rng,
                    requests=requests,
                    warmup=warmup,
                    budget_seconds=budget_seconds,
                )
                log(
                    f"[{entries:,} entries] {op.name}: p50 {result.p50_ms:.2f} ms,"
                    f" raw {result.raw_p50_ms:.2f} ms, {result.calls}, n={result.samples}"
                )
                results.append(result)
        measure_seconds = time.perf_counter() - started
        await drop_table(db.client, table)
    return BoardResult(
        entries,
        method,
        load_seconds,
        measure_seconds,
        results,
        board_entries={b.leaderboard_id: board_entries[b.leaderboard_id] for b in boards},
    )


def run(
    cache_dir: Path,
    entries: Sequence[int],
    *,
    requests: int,
    warmup: int,
    budget_seconds: float | None,
    seed: int,
    on_start: Callable[[EmbeddedDynamoDB], None] | None = None,
) -> list[BoardResult]:
    """Benchmark every board size in turn, each against its own fresh in-memory DynamoDB Local
    (one long-lived server slows down as tables pile up); ``on_start`` sees each server once
    it answers."""
    rng = random.Random(seed)
    boards: list[BoardResult] = []
    for n, local in dynamodb_per_size(entries, cache_dir):
        if on_start is not None:
            on_start(local)
        board = asyncio.run(
            bench_board(
                local.endpoint_url,
                n,
                requests=requests,
                warmup=warmup,
                budget_seconds=budget_seconds,
                rng=rng,
            )
        )
        print(board_markdown(board) + "\n", flush=True)
        boards.append(board)
    return boards
