"""Running the benchmark: for each board size a fresh table, the app served on it, the board
loaded and every operation measured."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Sequence

import aiohttp

from bench.loading import loader_for
from bench.measure import BoardResult, OperationResult, measure
from bench.operations import operations
from bench.report import board_markdown, log
from bench.stack import served_app
from bench.workload import new_board, plays

__all__ = ["bench_board", "run"]


async def bench_board(
    endpoint_url: str, entries: int, *, requests: int, warmup: int, rng: random.Random
) -> BoardResult:
    """Load a fresh table with one board of ``entries`` players and measure every operation."""
    table = f"bench-{entries}-{uuid.uuid4().hex[:8]}"
    async with served_app(endpoint_url, table) as served:
        db, counter = served.db, served.counter
        board = new_board()
        board_plays = plays(entries, rng)
        method, load = loader_for(entries)
        log(f"[{entries:,} entries] loading with {method} ...")
        started = time.perf_counter()
        loaded = await load(db, board, board_plays)
        load_seconds = time.perf_counter() - started
        log(f"[{entries:,} entries] loaded in {load_seconds:.1f} s")

        results: list[OperationResult] = []
        started = time.perf_counter()
        async with aiohttp.ClientSession() as http:
            for op in operations(db, board, loaded, entries):
                result = await measure(
                    op,
                    http=http,
                    url=served.url,
                    counter=counter,
                    rng=rng,
                    requests=requests,
                    warmup=warmup,
                )
                log(
                    f"[{entries:,} entries] {op.name}: p50 {result.p50_ms:.2f} ms,"
                    f" raw {result.raw_p50_ms:.2f} ms, {result.calls}"
                )
                results.append(result)
        measure_seconds = time.perf_counter() - started
        await db.client.delete_table(TableName=table)
    return BoardResult(entries, method, load_seconds, measure_seconds, results)


async def run(
    endpoint_url: str, entries: Sequence[int], *, requests: int, warmup: int, seed: int
) -> list[BoardResult]:
    """Benchmark every board size in turn against the DynamoDB at ``endpoint_url``."""
    rng = random.Random(seed)
    boards: list[BoardResult] = []
    for n in entries:
        board = await bench_board(endpoint_url, n, requests=requests, warmup=warmup, rng=rng)
        print(board_markdown(board) + "\n", flush=True)
        boards.append(board)
    return boards
