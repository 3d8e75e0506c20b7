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
import os
import platform
import random
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import redis
import redis.asyncio

from bench.core.report import log, save_json
from bench.rank_index_memory.measure import (
    META_KEY,
    RANK_VALUE_LIMIT,
    WARMUP_CALLS,
    ZSET_KEY,
    board_entries,
    info_int,
    load,
    measure_latency,
    measure_memory,
)
from bench.rank_index_memory.report import markdown
from leaderboard.embedded_redis import EmbeddedRedis

__all__ = ["main"]


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
