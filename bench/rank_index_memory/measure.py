"""One board loaded into Redis as the rank index stores it (in either format, see
bench.rank_index_memory.formats), what it takes in memory, and the latency of ZCOUNT and
ZREVRANK on it from the blocking and the asyncio client."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
import redis.asyncio

from bench.core.report import log
from bench.rank_index_memory.formats import ZSET_KEY, Loaded
from dynamo.scores import tie_value

__all__ = [
    "RANK_VALUE_LIMIT",
    "WARMUP_CALLS",
    "Latency",
    "Memory",
    "board_entries",
    "info_int",
    "measure_latency",
    "measure_memory",
    "percentile",
]

RANK_VALUE_LIMIT = 10**10
"""Rank values are drawn from ``range(RANK_VALUE_LIMIT)``: a board of score width 10."""
TIE_SPREAD_MS = 90 * 24 * 3600 * 1000
"""Plays are spread over the 90 days before the run."""
WARMUP_CALLS = 200
_MEMORY_BATCH = 1_000


@dataclass(frozen=True)
class Memory:
    """What the loaded board takes in Redis, in bytes."""

    zset_bytes: int
    zset_encoding: str
    state_bytes: int
    """The per-player state: the meta hash (before), or every bucket (after)."""
    state_keys: int
    state_encodings: dict[str, int]
    """How many of those keys have each encoding."""
    other_bytes: int
    """The board's other keys (state, layout)."""
    used_memory_before: int
    used_memory_after: int
    used_memory_rss_after: int
    zset_bytes_per_entry: float
    state_bytes_per_entry: float
    keys_bytes_per_entry: float
    """Every key of the board, by MEMORY USAGE."""
    used_memory_per_entry: float
    """(used_memory after - before) / entries: the keys and Redis's bookkeeping for them
    (MEMORY USAGE counts a sorted set's and a hash table's entries at 24 bytes, where the
    allocator gives them 32)."""


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


def board_entries(count: int, rng: random.Random) -> tuple[list[str], list[str], list[int]]:
    """``count`` entries: their player ids, tie values and rank values."""
    now = datetime.now(UTC)
    players = [f"p{i:07d}" for i in range(count)]
    ties = [tie_value(now - timedelta(milliseconds=rng.randrange(TIE_SPREAD_MS))) for _ in players]
    scores = [rng.randrange(RANK_VALUE_LIMIT) for _ in players]
    return players, ties, scores


def info_int(client: redis.Redis, section: str, field: str) -> int:
    info: dict[str, Any] = client.info(section)
    return int(info[field])


def _usage(client: redis.Redis, keys: Sequence[str]) -> tuple[int, Counter[str]]:
    """The summed MEMORY USAGE (every element counted) of ``keys``, and their encodings."""
    total = 0
    encodings: Counter[str] = Counter()
    for start in range(0, len(keys), _MEMORY_BATCH):
        part = keys[start : start + _MEMORY_BATCH]
        pipe = client.pipeline(transaction=False)
        for key in part:
            pipe.memory_usage(key, samples=0)
            pipe.object("encoding", key)
        replies = pipe.execute()
        for used, encoding in zip(replies[::2], replies[1::2], strict=True):
            if used is not None:
                total += int(used)
                encodings[_text(encoding)] += 1
    return total, encodings


_LOOKUPS = """
for i = 1, tonumber(ARGV[1]) do redis.call(ARGV[2], KEYS[1], ARGV[3]) end
return 0
"""
_LOOKUP_BATCH = 1_000_000


def settle(client: redis.Redis, loaded: Loaded, entries: int) -> float:
    """Let the hash tables of the board's big keys finish growing: Redis moves a table's
    entries to its doubled table one bucket per lookup or change of that key, so a key
    loaded just past a power of two holds both tables until as many operations have come
    as the old one had buckets (a board taking plays gets there soon). This makes that many
    lookups of one member (ZSCORE) or field (HGET), in scripts of a million; the seconds it
    took."""
    started = time.monotonic()
    steps = 1 << max(1, (entries - 1).bit_length())
    lookups: list[tuple[str, str, bytes]] = [("ZSCORE", loaded.format.zset_key, loaded.members[0])]
    if loaded.format.name == "before":
        lookups.append(("HGET", loaded.format.state_keys[0], loaded.players[0].encode()))
    script = client.register_script(_LOOKUPS)
    for command, key, argument in lookups:
        for start in range(0, steps, _LOOKUP_BATCH):
            script(keys=[key], args=[min(_LOOKUP_BATCH, steps - start), command, argument])
    return time.monotonic() - started


def measure_memory(
    client: redis.Redis, loaded: Loaded, entries: int, used_before: int, *, expected: int
) -> Memory:
    """MEMORY USAGE of every key of the board and INFO memory after loading."""
    assert client.zcard(ZSET_KEY) == expected, "the sorted set lacks members"
    zset_bytes, zset_encodings = _usage(client, [ZSET_KEY])
    state_bytes, state_encodings = _usage(client, loaded.format.state_keys)
    other_bytes, _ = _usage(client, loaded.format.other_keys)
    used_after = info_int(client, "memory", "used_memory")
    return Memory(
        zset_bytes=zset_bytes,
        zset_encoding=next(iter(zset_encodings)),
        state_bytes=state_bytes,
        state_keys=sum(state_encodings.values()),
        state_encodings=dict(state_encodings),
        other_bytes=other_bytes,
        used_memory_before=used_before,
        used_memory_after=used_after,
        used_memory_rss_after=info_int(client, "memory", "used_memory_rss"),
        zset_bytes_per_entry=zset_bytes / entries,
        state_bytes_per_entry=state_bytes / entries,
        keys_bytes_per_entry=(zset_bytes + state_bytes + other_bytes) / entries,
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
    command: str, members: Sequence[bytes], scores: Sequence[int], rng: random.Random, n: int
) -> list[bytes]:
    """``n`` random arguments: an existing member for ZREVRANK, an exclusive lower bound from
    an existing rank value for ZCOUNT."""
    if command == "zrevrank":
        return [members[rng.randrange(len(members))] for _ in range(n)]
    return [f"({scores[rng.randrange(len(scores))]}".encode() for _ in range(n)]


def time_sync(client: redis.Redis, command: str, arguments: Sequence[bytes]) -> list[int]:
    call: Callable[[bytes], object]
    if command == "zrevrank":

        def call(member: bytes) -> object:
            return client.zrevrank(ZSET_KEY, member)

    else:

        def call(bound: bytes) -> object:
            return client.zcount(ZSET_KEY, bound.decode(), "+inf")

    for argument in arguments[:WARMUP_CALLS]:
        call(argument)
    samples: list[int] = []
    for argument in arguments[WARMUP_CALLS:]:
        started = time.perf_counter_ns()
        result = call(argument)
        samples.append(time.perf_counter_ns() - started)
        assert result is not None
    return samples


async def time_async(url: str, command: str, arguments: Sequence[bytes]) -> list[int]:
    async with redis.asyncio.Redis.from_url(url) as client:
        call: Callable[[bytes], Awaitable[object]]
        if command == "zrevrank":

            async def call(member: bytes) -> object:
                result: object = await client.zrevrank(ZSET_KEY, member)
                return result

        else:

            async def call(bound: bytes) -> object:
                result: object = await client.zcount(ZSET_KEY, bound.decode(), "+inf")
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
    members: Sequence[bytes],
    scores: Sequence[int],
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
