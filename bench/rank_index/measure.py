"""Rank latency measurements of the rank index benchmark: the rank query through GraphQL to the
index instance (with its raw floor, the index's own lookup, and the ZCOUNT server time) and to
the COUNT instance (with the same probes asked of the index instance, the contract), each answer
checked against the rank computed from the generated scores."""

from __future__ import annotations

import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp
from redis.asyncio import Redis

from bench.core.measure import BenchError, format_calls, percentiles, post_graphql
from bench.core.report import log
from bench.rank_index.results import BoardData, Contract, RankLatency
from bench.rank_index.stack import Stack

__all__ = [
    "NAMED_RANK_QUERY",
    "RANK_QUERY",
    "ask_rank",
    "measure_count",
    "measure_index",
    "measure_named",
    "raw_rank",
]

RANK_QUERY = (
    'query Rank($p: ID!) { player(id: $p) { rank(leaderboardId: "%s") { rank total percentile } } }'
)
NAMED_RANK_QUERY = (
    "query NamedRank($p: ID!) { player(id: $p) { name"
    ' rank(leaderboardId: "%s") { rank total percentile } } }'
)
"""The rank with something else asked of the player: the player is read too."""


async def ask_rank(
    http: aiohttp.ClientSession,
    url: str,
    board: BoardData,
    player_id: str,
    query: str = RANK_QUERY,
) -> dict[str, Any]:
    data = await post_graphql(
        http, url, query % board.item.leaderboard_id, {"p": player_id}, key=None
    )
    rank: dict[str, Any] | None = (data.get("player") or {}).get("rank")
    if rank is None:
        raise BenchError(f"no rank for {player_id}: {json.dumps(data)}")
    return rank


async def _zcount_stats(redis: Redis) -> tuple[int, int]:
    stats: dict[str, Any] = await redis.info("commandstats")
    zcount = stats.get("cmdstat_zcount", {})
    return int(zcount.get("calls", 0)), int(zcount.get("usec", 0))


@dataclass
class _Tally:
    """The measured requests to one instance: their times, their DynamoDB call patterns and how
    many answered exactly."""

    samples: list[float] = field(default_factory=list)
    patterns: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    exact: int = 0

    def add(self, elapsed_ms: float, calls: Mapping[str, int], exact: bool) -> None:
        self.samples.append(elapsed_ms)
        self.patterns[format_calls(calls)] += 1
        self.calls += sum(calls.values())
        self.exact += exact

    def latency(self, source: str, requests: int) -> RankLatency:
        nan = float("nan")
        p50, p95, p99 = percentiles(self.samples) if self.samples else (nan, nan, nan)
        measured = len(self.samples)
        return RankLatency(
            source=source,
            requests=requests,
            p50_ms=p50,
            p95_ms=p95,
            p99_ms=p99,
            mean_ms=statistics.fmean(self.samples) if measured else nan,
            calls=dict(self.patterns.most_common()),
            calls_per_request=self.calls / measured if measured else nan,
            exact=self.exact,
        )


async def measure_index(
    stack: Stack,
    http: aiohttp.ClientSession,
    board: BoardData,
    *,
    requests: int,
    warmup: int,
    rng: random.Random,
) -> RankLatency:
    """The rank query to the index instance for random probes, one at a time, each answer
    checked; each request alternates with its raw counterpart (:func:`raw_rank`) on the same
    probe, swapping which goes first on every iteration."""
    tally = _Tally()
    raw: list[float] = []
    before = (0, 0)
    for i in range(warmup + requests):
        if i == warmup:
            before = await _zcount_stats(stack.redis)
        player = rng.choice(board.probes)
        expected = board.expected(player)
        for via_service in (True, False) if i % 2 == 0 else (False, True):
            stack.index_calls.reset()
            started = time.perf_counter()
            if via_service:
                rank = await ask_rank(http, stack.index_url, board, player)
            else:
                raw_answer = await raw_rank(stack, board, player)
            elapsed = (time.perf_counter() - started) * 1000
            if i < warmup:
                continue
            if not via_service:
                raw.append(elapsed)
                if raw_answer != expected["rank"]:
                    raise BenchError(f"raw rank of {player}: {raw_answer}, expected {expected}")
                continue
            tally.add(elapsed, stack.index_calls.snapshot(), rank == expected)
            if rank != expected:
                log(f"  index: {player} got {rank}, expected {expected}")
    after = await _zcount_stats(stack.redis)
    zcalls, zusec = after[0] - before[0], after[1] - before[1]

    raw_p50, _, raw_p99 = percentiles(raw)
    return replace(
        tally.latency("index", requests),
        raw_p50_ms=raw_p50,
        raw_p99_ms=raw_p99,
        zcount_calls=zcalls,
        zcount_server_us=zusec / zcalls if zcalls else 0.0,
    )


async def measure_named(
    stack: Stack,
    http: aiohttp.ClientSession,
    board: BoardData,
    *,
    requests: int,
    warmup: int,
    rng: random.Random,
) -> RankLatency:
    """:data:`NAMED_RANK_QUERY` to the index instance for random probes, one at a time, each
    rank checked: the rank query of a profile, which reads the player as well."""
    tally = _Tally()
    for i in range(warmup + requests):
        player = rng.choice(board.probes)
        expected = board.expected(player)
        stack.index_calls.reset()
        started = time.perf_counter()
        rank = await ask_rank(http, stack.index_url, board, player, NAMED_RANK_QUERY)
        elapsed = (time.perf_counter() - started) * 1000
        if i < warmup:
            continue
        tally.add(elapsed, stack.index_calls.snapshot(), rank == expected)
        if rank != expected:
            log(f"  index + name: {player} got {rank}, expected {expected}")
    return tally.latency("index + name", requests)


async def measure_count(
    stack: Stack,
    http: aiohttp.ClientSession,
    board: BoardData,
    *,
    requests: int,
    warmup: int,
    rng: random.Random,
) -> tuple[RankLatency, Contract]:
    """The rank query to the COUNT instance for random probes, one at a time, each answer
    checked; the index instance is asked for the same probe right after (untimed) and the two
    answers compared. A request that fails (a COUNT over a large board can outlast the app's
    DynamoDB read timeout) is counted, not fatal."""
    tally = _Tally()
    same = both_exact = failed = 0
    for i in range(warmup + requests):
        player = rng.choice(board.probes)
        expected = board.expected(player)
        stack.count_calls.reset()
        started = time.perf_counter()
        try:
            rank = await ask_rank(http, stack.count_url, board, player)
        except (BenchError, aiohttp.ClientError, TimeoutError) as error:
            if i >= warmup:
                failed += 1
                log(f"  COUNT: {player} failed: {error}")
            continue
        elapsed = (time.perf_counter() - started) * 1000
        if i < warmup:
            continue
        tally.add(elapsed, stack.count_calls.snapshot(), rank == expected)
        from_index = await ask_rank(http, stack.index_url, board, player)
        if from_index == rank:
            same += 1
            both_exact += rank == expected
        else:
            log(f"  contract: {player} index {from_index} != COUNT {rank}")
    latency = replace(tally.latency("COUNT", requests), failed=failed)
    return latency, Contract(sample=len(tally.samples), same=same, exact=both_exact)


async def raw_rank(stack: Stack, board: BoardData, player_id: str) -> int:
    """The calls a rank request makes, sent from the benchmark's process: the index's lookup of
    the player's entry and its rank (:meth:`RankIndex.ranks`, one round trip). The player is
    not read: its entry proves it exists."""
    board_id = board.item.leaderboard_id
    found = await stack.index.ranks({board_id: [(player_id, None)]})
    answer = (found or {}).get(board_id, [None])[0]
    if answer is None:
        raise BenchError(f"the index declined to rank {player_id} on {board_id}")
    return answer.better + 1
