"""Running the rank index benchmark: one board size on a fresh table (load, wait for the
projector, measure rank latency, contract and lag, verify the index), and every size in turn,
each with its own in-memory DynamoDB Local and redis-server."""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Sequence
from typing import Any

import aiohttp

from bench.core.rank_sync import wait_in_sync
from bench.core.report import log, machine_info
from bench.core.servers import dynamodb_and_redis_per_size, redis_version
from bench.rank_index.lag import measure_lag
from bench.rank_index.loading import load_direct, load_whole
from bench.rank_index.measure import measure_count, measure_index, measure_named
from bench.rank_index.results import Contract, LagResult, Options, RankLatency, SizeResult
from bench.rank_index.stack import rank_stack
from leaderboard import loops
from leaderboard.config import default_cache_dir

__all__ = ["bench_size", "run"]


async def bench_size(
    endpoint_url: str, redis_url: str, entries: int, options: Options, rng: random.Random
) -> SizeResult:
    """One board of ``entries`` on a fresh table, served with and without the index."""
    began = time.perf_counter()
    load_before = os.getloadavg()[0]
    table = f"bench-ranks-{entries}-{uuid.uuid4().hex[:8]}"
    async with rank_stack(endpoint_url, redis_url, table) as stack:
        if entries <= options.bulk_max:
            log(f"[{entries:,}] writing every entry into the table ...")
            loaded = await load_whole(stack, entries, rng)
        else:
            loaded = await load_direct(stack, entries, options.probes, rng)
        board = loaded.board
        sync_seconds = await wait_in_sync(stack.redis, stack.table)
        log(f"[{entries:,}] projector caught up {sync_seconds:.1f} s after the index build")
        used_memory = int((await stack.redis.info("memory"))["used_memory"])

        whole = entries <= options.bulk_max
        count_skipped: str | None = None
        if not whole:
            count_skipped = "not measured: the table holds only the probes' entries"
        elif entries > options.count_max:
            count_skipped = f"not measured: above --count-max {options.count_max:,}"
        latencies: list[RankLatency] = []
        contract: Contract | None = None
        async with aiohttp.ClientSession() as http:
            index = await measure_index(
                stack, http, board, requests=options.requests, warmup=options.warmup, rng=rng
            )
            log(
                f"[{entries:,}] index: p50 {index.p50_ms:.2f} ms, p99 {index.p99_ms:.2f} ms,"
                f" {index.exact}/{index.requests} exact"
            )
            latencies.append(index)
            named = await measure_named(
                stack, http, board, requests=options.requests, warmup=options.warmup, rng=rng
            )
            log(f"[{entries:,}] index + name: p50 {named.p50_ms:.2f} ms, p99 {named.p99_ms:.2f} ms")
            latencies.append(named)
            if count_skipped is None:
                count, contract = await measure_count(
                    stack,
                    http,
                    board,
                    requests=options.count_requests,
                    warmup=options.count_warmup,
                    rng=rng,
                )
                log(
                    f"[{entries:,}] COUNT: p50 {count.p50_ms:.2f} ms, p99 {count.p99_ms:.2f} ms,"
                    f" {count.exact}/{count.requests} exact, {count.failed} failed;"
                    f" index = COUNT on {contract.same}/{contract.sample}"
                )
                latencies.append(count)
            lag: LagResult | None = None
            if options.lag_submissions:
                lag = await measure_lag(stack, http, board, options.lag_submissions, rng)
                log(f"[{entries:,}] lag: p50 {lag.p50_ms:.1f} ms, p99 {lag.p99_ms:.1f} ms")
        if whole:
            checked = await stack.index.verify(stack.db, board.item.leaderboard_id)
            verified = (
                f"index equals table ({checked.entries:,} entries)"
                if checked.ok
                else f"DIFFERS: {len(checked.missing)} missing, {len(checked.extra)} extra,"
                f" {len(checked.wrong_score)} wrong score"
            )
        else:
            verified = "not run (the table holds only the probes)"
    return SizeResult(
        entries=entries,
        load_method=loaded.load_method,
        load_seconds=loaded.load_seconds,
        index_method=loaded.index_method,
        index_seconds=loaded.index_seconds,
        sync_seconds=sync_seconds,
        table_items=loaded.table_items,
        redis_used_memory=used_memory,
        latencies=latencies,
        count_skipped=count_skipped,
        contract=contract,
        lag=lag,
        verified=verified,
        total_seconds=time.perf_counter() - began,
        load_average=(load_before, os.getloadavg()[0]),
    )


def run(
    sizes: Sequence[int], options: Options, seed: int
) -> tuple[list[SizeResult], dict[str, Any]]:
    """Every board size in turn, each with its own in-memory DynamoDB Local and redis-server;
    the results, and the machine they ran on. (In one DynamoDB Local, writes to a second table
    with a stream slow down with the number of records in the first one's stream.)"""
    rng = random.Random(seed)
    results: list[SizeResult] = []
    machine: dict[str, Any] = {}
    for entries, local, redis in dynamodb_and_redis_per_size(sizes, default_cache_dir()):
        if not machine:
            machine = machine_info(local)
            machine["redis"] = redis_version(redis.url)
            machine["loop"] = loops.available()
        result = loops.run(bench_size(local.endpoint_url, redis.url, entries, options, rng))
        results.append(result)
    return results, machine
