"""Memory and query latency of one board's rank index in Redis, at a given size.

``python -m bench.rank_index_memory [--entries 1000000] [--calls 10000] [--out bench/results]``

The benchmark starts an in-memory redis-server (:class:`~leaderboard.embedded_redis.EmbeddedRedis`)
and loads one board the way the rank index stores it (see ``rankindex/keys.py``):

- the sorted set ``rank:{<board>}``, member ``<13-digit tie value>#<player id>``, score the
  entry's integer rank value (here drawn from 0 to 10**10 - 1);
- the hash ``rank:{<board>}:meta``, one field per player holding ``<version>|<member>``.

It loads through pipelines of ``--chunk`` entries (one ZADD and one HSET per chunk), then
reports ``MEMORY USAGE`` (``SAMPLES 0``: every element counted) of both keys, ``used_memory``
from ``INFO memory`` before and after, and bytes per entry. Last it times ZCOUNT (the entries
strictly better than a score) and ZREVRANK (one member's position) over ``--calls`` random
calls each, one at a time from Python through redis-py over loopback, with the asyncio client
the service uses and with the blocking client, next to the server's own time per call from
``INFO commandstats``. It prints Markdown tables and writes ``rank_index_memory.json`` in
``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import redis
import redis.asyncio

from bench.core.report import log, save_json
from leaderboard.embedded_redis import EmbeddedRedis

__all__ = ["Latency", "Memory", "main", "percentile"]

BOARD = "bench"
ZSET_KEY = f"rank:{{{BOARD}}}"
META_KEY = f"{ZSET_KEY}:meta"
RANK_VALUE_LIMIT = 10**10
"""Rank values are drawn from ``range(RANK_VALUE_LIMIT)``: a board of score width 10."""
TIE_WIDTH = 13
TIE_MAX = 10**TIE_WIDTH - 1
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
    now_ms = int(time.time() * 1000)
    members: list[str] = []
    scores: list[float] = []
    for i in range(count):
        tie = str(TIE_MAX - (now_ms - rng.randrange(TIE_SPREAD_MS))).zfill(TIE_WIDTH)
        members.append(f"{tie}#p{i:07d}")
        scores.append(float(rng.randrange(RANK_VALUE_LIMIT)))
    return members, scores


def load(client: redis.Redis, members: Sequence[str], scores: Sequence[float], chunk: int) -> None:
    """ZADD every member to the sorted set and HSET its meta field, ``chunk`` entries per
    pipeline."""
    for start in range(0, len(members), chunk):
        part = range(start, min(start + chunk, len(members)))
        pipe = client.pipeline(transaction=False)
        pipe.zadd(ZSET_KEY, {members[i]: scores[i] for i in part})
        pipe.hset(META_KEY, mapping={members[i].split("#", 1)[1]: f"1|{members[i]}" for i in part})
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


def markdown(
    machine: dict[str, Any],
    entries: int,
    load_seconds: float,
    memory: Memory,
    latency: list[Latency],
) -> str:
    mib = 1 << 20
    used_delta = memory.used_memory_after - memory.used_memory_before
    lines = [
        f"# Rank index in Redis: one board of {entries:,} entries",
        "",
        f"- Machine: {machine['cpu_count']} cores ({machine['platform']}),"
        f" Python {machine['python']}, redis-py {machine['redis_py']}",
        f"- redis-server {machine['redis_server']} ({machine['allocator']}), in memory,"
        " on the same machine over loopback",
        f"- Loaded in {load_seconds:.1f} s",
        "",
        "| what | bytes | MiB | bytes per entry |",
        "|---|--:|--:|--:|",
        f"| `MEMORY USAGE {ZSET_KEY}` ({memory.zset_encoding}) | {memory.zset_bytes:,} |"
        f" {memory.zset_bytes / mib:.1f} | {memory.zset_bytes_per_entry:.1f} |",
        f"| `MEMORY USAGE {META_KEY}` ({memory.hash_encoding}) | {memory.hash_bytes:,} |"
        f" {memory.hash_bytes / mib:.1f} | {memory.hash_bytes_per_entry:.1f} |",
        f"| both keys | {memory.zset_bytes + memory.hash_bytes:,} |"
        f" {(memory.zset_bytes + memory.hash_bytes) / mib:.1f} |"
        f" {(memory.zset_bytes + memory.hash_bytes) / entries:.1f} |",
        f"| `used_memory` before | {memory.used_memory_before:,} |"
        f" {memory.used_memory_before / mib:.1f} | |",
        f"| `used_memory` after | {memory.used_memory_after:,} |"
        f" {memory.used_memory_after / mib:.1f} | |",
        f"| `used_memory` after - before | {used_delta:,} | {used_delta / mib:.1f} |"
        f" {memory.used_memory_per_entry:.1f} |",
        f"| `used_memory_rss` after | {memory.used_memory_rss_after:,} |"
        f" {memory.used_memory_rss_after / mib:.1f} | |",
        "",
        f"Latency of one call, measured from Python ({latency[0].calls:,} random calls each,"
        f" after {WARMUP_CALLS} warm-up); server = `usec_per_call` of `INFO commandstats`:",
        "",
        "| command | client | p50 µs | p99 µs | mean µs | server µs |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for r in latency:
        lines.append(
            f"| {r.command} | {r.client} | {r.p50_us:.1f} | {r.p99_us:.1f} | {r.mean_us:.1f} |"
            f" {r.server_us_per_call:.2f} |"
        )
    return "\n".join(lines)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rank_index_memory",
        description="Memory and ZCOUNT/ZREVRANK latency of one board's rank index in an"
        " in-memory redis-server.",
    )
    parser.add_argument("--entries", type=int, default=1_000_000, help="board size")
    parser.add_argument("--calls", type=int, default=10_000, help="timed calls per command")
    parser.add_argument("--chunk", type=int, default=10_000, help="entries per pipeline")
    parser.add_argument("--seed", type=int, default=1, help="random seed")
    parser.add_argument(
        "--out", type=Path, default=Path("bench/results"), help="folder for the JSON result"
    )
    args = parser.parse_args(argv)
    for name in ("entries", "calls", "chunk"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    rng = random.Random(args.seed)
    started = time.monotonic()
    log(f"generating {args.entries:,} entries")
    members, scores = board_entries(args.entries, rng)
    expected = len(set(members))

    with EmbeddedRedis() as server, redis.Redis.from_url(server.url) as client:
        server_info: dict[str, Any] = client.info("server")
        machine = {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "redis_py": redis.__version__,
            "redis_server": str(server_info["redis_version"]),
            "allocator": str(client.info("memory")["mem_allocator"]),
        }
        used_before = info_int(client, "memory", "used_memory")

        log(f"loading into {server.url} in pipelines of {args.chunk:,}")
        load_started = time.monotonic()
        load(client, members, scores, args.chunk)
        load_seconds = time.monotonic() - load_started

        memory = measure_memory(client, args.entries, used_before, expected=expected)
        latency = measure_latency(client, server.url, members, scores, calls=args.calls, rng=rng)

    report = markdown(machine, args.entries, load_seconds, memory, latency)
    print(report)
    document = {
        "machine": machine,
        "settings": {
            "entries": args.entries,
            "calls": args.calls,
            "warmup_calls": WARMUP_CALLS,
            "chunk": args.chunk,
            "seed": args.seed,
            "zset_key": ZSET_KEY,
            "meta_key": META_KEY,
            "rank_value_limit": RANK_VALUE_LIMIT,
        },
        "load_seconds": round(load_seconds, 2),
        "memory": asdict(memory),
        "latency": [asdict(r) for r in latency],
        "total_seconds": round(time.monotonic() - started, 1),
    }
    save_json(args.out, "rank_index_memory", document)
    return 0
