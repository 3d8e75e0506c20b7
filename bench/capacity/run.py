"""Running the measurement: for each board size a fresh DynamoDB Local (and a redis-server), the
boards loaded, the service served on them twice (ranks by COUNT, and ranks from the rank index),
and the operations, the mix and the hot-board simulation measured."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aioboto3
import aiohttp

from bench.capacity.ceiling import TARGET_RATE, Balance, crowd_balance
from bench.capacity.hot import HotResult, hot_board
from bench.capacity.mix import run_mix
from bench.capacity.operations import play_operations, rank_operations, read_operations
from bench.capacity.probe import Measured, Probe, probe
from bench.capacity.sharded import PhaseRun, play_sharded
from bench.capacity.top_pages import PageCost, top_page_costs
from bench.core.load.seeding import seed
from bench.core.report import log
from bench.core.sizes import stored_bytes
from bench.core.stack import CREDENTIALS, CURSOR_SECRET, LOADER_CONFIG, REGION
from bench.core.workload import PROFILE_BOARDS, LoadedPlayer
from dynamo.cursors import CursorCodec
from dynamo.db import Db
from dynamo.leaderboards import Operator
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from leaderboard.embedded_redis import EmbeddedRedis

__all__ = ["Plan", "Results", "measure_size", "run", "storage"]


@dataclass(frozen=True)
class Plan:
    """What to measure: the board sizes, the size at which the operations, the mix and the
    hot boards run, how many requests of the mix (none with 0), the hot boards' rate and
    duration; the partitions of the write-sharded boards, the players who play each, and the
    plays a second their figures are given at."""

    sizes: tuple[int, ...]
    operations_size: int
    mix_requests: int
    hot_rate: float
    hot_seconds: float
    hot_players: int
    seed: int = 42
    partitions: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    sharded_players: int = 200
    rate: float = TARGET_RATE


@dataclass
class Results:
    """Everything measured."""

    ranks: list[Measured] = field(default_factory=list)
    operations: list[Measured] = field(default_factory=list)
    mix: Measured | None = None
    mix_kinds: list[Measured] = field(default_factory=list)
    hot: list[HotResult] = field(default_factory=list)
    sharded: list[PhaseRun] = field(default_factory=list)
    top_pages: list[PageCost] = field(default_factory=list)
    balance: Balance | None = None
    rate: float = TARGET_RATE
    """The plays a second the write-sharded boards' figures are given at."""
    storage: dict[str, Any] = field(default_factory=dict)
    loads: dict[int, float] = field(default_factory=dict)


def _inspector(endpoint_url: str) -> Any:
    return aioboto3.Session().client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=REGION,
        aws_access_key_id=CREDENTIALS[0],
        aws_secret_access_key=CREDENTIALS[1],
        config=LOADER_CONFIG,
    )


async def storage(inspector: Any, table: str) -> tuple[int, int]:
    """The bytes DynamoDB bills for storing ``table`` (each item and each of its index copies
    with :data:`~bench.core.sizes.ITEM_OVERHEAD_BYTES`) and the number of items, by a Scan."""
    total = items = 0
    start: dict[str, Any] | None = None
    while True:
        page = await inspector.scan(
            TableName=table, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {})
        )
        for item in page["Items"]:
            total += stored_bytes(item)
            items += 1
        start = page.get("LastEvaluatedKey")
        if not start:
            return total, items


async def measure_size(
    endpoint_url: str, redis_url: str | None, entries: int, plan: Plan, results: Results
) -> None:
    """Load a fresh table with ``entries`` players and measure into ``results``: the rank by
    COUNT at this size; at :attr:`Plan.operations_size` (given ``redis_url``) also the rank from
    the index, every operation, the mix, the hot boards, the write-sharded boards and the
    top-100 page on each of their partitions."""
    rng = random.Random(plan.seed + entries)
    table = f"capacity-{entries}-{uuid.uuid4().hex[:8]}"
    full = entries == plan.operations_size and redis_url is not None
    async with AsyncExitStack() as stack:
        inspector = await stack.enter_async_context(_inspector(endpoint_url))
        http = await stack.enter_async_context(aiohttp.ClientSession())
        plain = await stack.enter_async_context(probe(endpoint_url, table, inspector, http))
        indexed: Probe | None = None
        if full:
            indexed = await stack.enter_async_context(
                probe(endpoint_url, table, inspector, http, redis_url=redis_url, project_ranks=True)
            )
        log(f"[capacity {entries:,}] loading ...")
        seeded = await seed(endpoint_url, table, entries, redis_url if full else None, rng)
        results.loads[entries] = seeded.load_seconds
        players: list[LoadedPlayer] = seeded.players
        if full:
            size, items = await storage(inspector, table)
            results.storage = {"players": entries, "items": items, "bytes": size}
        results.ranks += await rank_operations(plain, indexed, players, entries)
        if indexed is None:
            return
        profiled = next(p for p in players if p.board_ids == PROFILE_BOARDS)
        results.operations += await read_operations(plain, profiled.player_id)
        results.operations += await play_operations(indexed)
        if plan.mix_requests:
            log(f"[capacity {entries:,}] the mix, {plan.mix_requests} requests ...")
            results.mix, results.mix_kinds = await run_mix(indexed, players, plan.mix_requests, rng)
        pool = players[: plan.hot_players]
        for operator in Operator:
            log(f"[capacity {entries:,}] hot {operator.value} board ...")
            results.hot.append(
                await hot_board(
                    plain, operator, pool, rate=plan.hot_rate, seconds=plan.hot_seconds, rng=rng
                )
            )
        results.rate = plan.rate
        crowd = players[: plan.sharded_players]
        for operator in Operator:
            for n in plan.partitions:
                parts = f"{n} partition{'s' if n > 1 else ''}"
                log(f"[capacity {entries:,}] {operator.value} board of {parts} ...")
                results.sharded += await play_sharded(plain, operator, n, crowd, rng)
        log(f"[capacity {entries:,}] the top 100 on {', '.join(map(str, plan.partitions))} ...")
        writer = Db(client=inspector, table=table, cursors=CursorCodec(CURSOR_SECRET))
        results.top_pages = await top_page_costs(plain, writer, plan.partitions, players)
        results.balance = crowd_balance(plan.partitions)


def run(
    cache_dir: Path, plan: Plan, on_start: Callable[[EmbeddedDynamoDB], None] | None = None
) -> Results:
    """Measure every size of ``plan``, each on a DynamoDB Local (and redis-server) of its own;
    ``on_start`` sees each DynamoDB Local once it answers."""
    results = Results()
    for entries in plan.sizes:
        with EmbeddedDynamoDB(cache_dir) as local:
            if on_start is not None:
                on_start(local)
            if entries == plan.operations_size:
                with EmbeddedRedis() as redis:
                    asyncio.run(measure_size(local.endpoint_url, redis.url, entries, plan, results))
            else:
                asyncio.run(measure_size(local.endpoint_url, None, entries, plan, results))
    return results


def sizes_in_order(sizes: Sequence[int]) -> tuple[int, ...]:
    """The sizes, smallest first, each once."""
    return tuple(sorted(set(sizes)))
