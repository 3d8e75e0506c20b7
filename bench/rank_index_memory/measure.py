"""One board loaded into Redis the way the rank index stores it, what it takes in memory, and
the latency of ZCOUNT and ZREVRANK on it from the blocking and the asyncio client."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
import redis.asyncio

from bench.core.report import log
from dynamo.scores import tie_value
from rankindex.keys import META, ZSET, member, member_parts

__all__ = [
    "META_KEY",
    "RANK_VALUE_LIMIT",
    "WARMUP_CALLS",
    "ZSET_KEY",
    "Latency",
    "Memory",
    "board_entries",
    "info_int",
    "load",
    "measure_latency",
    "measure_memory",
    "percentile",
]

BOARD = "bench"
ZSET_KEY = ZSET.format(ns=BOARD, board=BOARD)
META_KEY = META.format(ns=BOARD, board=BOARD)
RANK_VALUE_LIMIT = 10**10
"""Rank values are drawn from ``range(RANK_VALUE_LIMIT)``: a board of score width 10."""
TIE_SPREAD_MS = 90 * 24 * 3600 * 1000
"""Plays are spread over the 90 days before the run."""
WARMUP_CALLS = 200


@dataclass(frozen=True)
class Memory:
    """What the loaded board takes in Redis, in bytes."""

    zset_bytes: int
    zset_encoding: str
    hash_bytes: int
    hash_encoding: str
    used_memory_before: int
    used_memory_after: int
    used_memory_rss_after: int
    zset_bytes_per_entry: float
    hash_bytes_per_entry: float
    used_memory_per_entry: float
    """(used_memory after - before) / entries: both keys and Redis's bookkeeping for them."""


@dataclass(frozen=True)
class Latency:
    """One command timed from Python: client-observed percentiles and the server's own mean."""

    command: str
    client: str
    calls: int
    p50_us: float
    p99_us: float
    mean_us: float
    server_us_per_call: float
    """``usec_per_call`` from ``INFO commandstats`` over the same calls (warm-up included)."""


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values (``fraction`` in 0..1)."""
    if not sorted_values:
        raise ValueError("no values")
    index = max(0, min(len(sorted_values) - 1, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


def board_entries(count: int, rng: random.Random) -> tuple[list[str], list[float]]:
    """``count`` members and their rank values, as the rank index stores a board."""
    now = datetime.now(UTC)
    members: list[str] = []
    scores: list[float] = []
    for i in range(count):
        attained = now - timedelta(milliseconds=rng.randrange(TIE_SPREAD_MS))
        members.append(member(tie_value(attained), f"p{i:07d}"))
        scores.append(float(rng.randrange(RANK_VALUE_LIMIT)))
    return members, scores


def load(client: redis.Redis, members: Sequence[str], scores: Sequence[float], chunk: int) -> None:
    """ZADD every member to the sorted set and HSET its meta field, ``chunk`` entries per
    pipeline."""
    for start in range(0, len(members), chunk):
        part = range(start, min(start + chunk, len(members)))
        pipe = client.pipeline(transaction=False)
        pipe.zadd(ZSET_KEY, {members[i]: scores[i] for i in part})
        pipe.hset(META_KEY, mapping={member_parts(members[i])[1]: f"1|{members[i]}" for i in part})
        pipe.execute()


def info_int(client: redis.Redis, section: str, field: str) -> int:
    info: dict[str, Any] = client.info(section)
    return int(info[field])


def measure_memory(client: redis.Redis, entries: int, used_before: int, *, expected: int) -> Memory:
    """MEMORY USAGE of both keys (every element sampled) and INFO memory after loading."""
    assert client.zcard(ZSET_KEY) == expected, "the sorted set lacks members"
    assert client.hlen(META_KEY) == expected, "the meta hash lacks fields"
    zset_bytes = int(client.memory_usage(ZSET_KEY, samples=0) or 0)
    hash_bytes = int(client.memory_usage(META_KEY, samples=0) or 0)
    used_after = info_int(client, "memory", "used_memory")
    return Memory(
        zset_bytes=zset_bytes,
        zset_encoding=_text(client.object("encoding", ZSET_KEY)),
        hash_bytes=hash_bytes,
        hash_encoding=_text(client.object("encoding", META_KEY)),
        used_memory_before=used_before,
        used_memory_after=used_after,
        used_memory_rss_after=info_int(client, "memory", "used_memory_rss"),
        zset_bytes_per_entry=zset_bytes / entries,
        hash_bytes_per_entry=hash_bytes / entries,
        used_memory_per_entry=(used_after - used_before) / entries,
    )


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _server_us_per_call(client: redis.Redis, command: str) -> float:
    stats: dict[str, Any] = client.info("commandstats")
    entry: dict[str, Any] = stats.get(f"cmdstat_{command}", {})
    return float(entry.get("usec_per_call", 0.0))


def _latency(command: str, client: str, samples_ns: list[int], server_us: float) -> Latency:
    values = sorted(ns / 1000 for ns in samples_ns)
    return Latency(
        command=command.upper(),
        client=client,
        calls=len(values),
        p50_us=round(percentile(values, 0.50), 1),
        p99_us=round(percentile(values, 0.99), 1),
        mean_us=round(sum(values) / len(values), 1),
        server_us_per_call=round(server_us, 2),
    )


def _calls(
    command: str, members: Sequence[str], scores: Sequence[float], rng: random.Random, n: int
) -> list[str]:
    """``n`` random arguments: an existing member for ZREVRANK, an exclusive lower bound from
    an existing rank value for ZCOUNT."""
    if command == "zrevrank":
        return [members[rng.randrange(len(members))] for _ in range(n)]
    return [f"({int(scores[rng.randrange(len(scores))])}" for _ in range(n)]


def time_sync(client: redis.Redis, command: str, arguments: Sequence[str]) -> list[int]:
    call: Callable[[str], object]
    if command == "zrevrank":

        def call(member: str) -> object:
            return client.zrevrank(ZSET_KEY, member)

    else:

        def call(bound: str) -> object:
            return client.zcount(ZSET_KEY, bound, "+inf")

    for argument in arguments[:WARMUP_CALLS]:
        call(argument)
    samples: list[int] = []
    for argument in arguments[WARMUP_CALLS:]:
        started = time.perf_counter_ns()
        result = call(argument)
        samples.append(time.perf_counter_ns() - started)
        assert result is not None
    return samples


async def time_async(url: str, command: str, arguments: Sequence[str]) -> list[int]:
    async with redis.asyncio.Redis.from_url(url) as client:
        call: Callable[[str], Awaitable[object]]
        if command == "zrevrank":

            async def call(member: str) -> object:
                result: object = await client.zrevrank(ZSET_KEY, member)
                return result

        else:

            async def call(bound: str) -> object:
                result: object = await client.zcount(ZSET_KEY, bound, "+inf")
                return result

        for argument in arguments[:WARMUP_CALLS]:
            await call(argument)
        samples: list[int] = []
        for argument in arguments[WARMUP_CALLS:]:
            started = time.perf_counter_ns()
            result = await call(argument)
            samples.append(time.perf_counter_ns() - started)
            assert result is not None
        return samples


def measure_latency(
    client: redis.Redis,
    url: str,
    members: Sequence[str],
    scores: Sequence[float],
    *,
    calls: int,
    rng: random.Random,
) -> list[Latency]:
    results: list[Latency] = []
    for name in ("redis.asyncio", "redis (blocking)"):
        for command in ("zcount", "zrevrank"):
            arguments = _calls(command, members, scores, rng, WARMUP_CALLS + calls)
            client.config_resetstat()
            if name == "redis.asyncio":
                samples = asyncio.run(time_async(url, command, arguments))
            else:
                samples = time_sync(client, command, arguments)
            results.append(_latency(command, name, samples, _server_us_per_call(client, command)))
            log(f"timed {command.upper()} with {name}")
    return results
