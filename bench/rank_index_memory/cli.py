"""Memory and query latency of one board's rank index in Redis, at given sizes, in the
format the index used before and in the one it uses now.

``python -m bench.rank_index_memory [--entries 1000000 10000000] [--calls 10000]
[--formats before after] [--out bench/results]``

For each size and format the benchmark starts a fresh in-memory redis-server
(:class:`~leaderboard.embedded_redis.EmbeddedRedis`) and loads one board the way that format
stores it (bench.rank_index_memory.formats): the sorted set (member the entry's tie value and
player id, score its integer rank value, here drawn from 0 to 10**10 - 1) and the per-player
state (``before``: one hash of ``<version>|<member>``; ``after``: the player records in
their buckets). It loads through pipelines of ``--chunk`` entries, then reports ``MEMORY
USAGE`` (``SAMPLES 0``: every element counted) of every key of the board, ``used_memory``
from ``INFO memory`` before and after, and bytes per entry, once the big keys' hash tables
have finished growing (``settle``: Redis moves a growing table one bucket per operation on
its key, as a board taking plays soon does). Last it times ZCOUNT (the entries
strictly better than a score) and ZREVRANK (one member's position) over ``--calls`` random
calls each, one at a time from Python through redis-py over loopback, with the asyncio client
the service uses and with the blocking client, next to the server's own time per call from
``INFO commandstats``. It prints Markdown tables and writes ``rank_index_memory.json`` and
``rank_index_memory.md`` in ``--out``.
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

from bench.core.report import log, save_results
from bench.rank_index_memory.formats import FORMATS, ZSET_KEY, load
from bench.rank_index_memory.measure import (
    RANK_VALUE_LIMIT,
    WARMUP_CALLS,
    board_entries,
    info_int,
    measure_latency,
    measure_memory,
    settle,
)
from bench.rank_index_memory.report import markdown
from leaderboard.embedded_redis import EmbeddedRedis
from rankindex.players import FILL

__all__ = ["main"]

_SOCKET_TIMEOUT = 1_800
"""Seconds one reply may take: MEMORY USAGE of a sorted set of 10 million counts every one."""


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rank_index_memory",
        description="Memory and ZCOUNT/ZREVRANK latency of one board's rank index in an"
        " in-memory redis-server, in the format before and after.",
    )
    parser.add_argument(
        "--entries", type=int, nargs="+", default=[1_000_000, 10_000_000], help="board sizes"
    )
    parser.add_argument(
        "--formats", nargs="+", choices=FORMATS, default=list(FORMATS), help="formats loaded"
    )
    parser.add_argument("--calls", type=int, default=10_000, help="timed calls per command")
    parser.add_argument("--chunk", type=int, default=10_000, help="entries per pipeline")
    parser.add_argument("--seed", type=int, default=1, help="random seed")
    parser.add_argument(
        "--out", type=Path, default=Path("bench/results"), help="folder for the results"
    )
    args = parser.parse_args(argv)
    if min(*args.entries, args.calls, args.chunk) < 1:
        parser.error("--entries, --calls and --chunk must be at least 1")
    return args


def _machine(client: redis.Redis) -> dict[str, Any]:
    server: dict[str, Any] = client.info("server")
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "redis_py": redis.__version__,
        "redis_server": str(server["redis_version"]),
        "allocator": str(client.info("memory")["mem_allocator"]),
    }


def _measure_format(
    name: str,
    players: list[str],
    ties: list[str],
    scores: list[int],
    args: argparse.Namespace,
    rng: random.Random,
    machine: dict[str, Any],
) -> dict[str, Any]:
    """Load one format into a fresh server and measure it."""
    with (
        EmbeddedRedis() as server,
        redis.Redis.from_url(server.url, socket_timeout=_SOCKET_TIMEOUT) as client,
    ):
        if not machine:
            machine.update(_machine(client))
        used_before = info_int(client, "memory", "used_memory")
        log(f"[{len(players):,} {name}] loading in pipelines of {args.chunk:,}")
        started = time.monotonic()
        loaded = load(client, name, players, ties, scores, args.chunk)
        load_seconds = time.monotonic() - started
        settle_seconds = settle(client, loaded, len(players))
        memory = measure_memory(client, loaded, len(players), used_before, expected=len(players))
        log(
            f"[{len(players):,} {name}] {memory.used_memory_per_entry:.1f} B/entry used_memory,"
            f" {memory.keys_bytes_per_entry:.1f} B/entry MEMORY USAGE"
        )
        latency = measure_latency(
            client, server.url, loaded.members, scores, calls=args.calls, rng=rng
        )
    return {
        "load_seconds": round(load_seconds, 2),
        "settle_seconds": round(settle_seconds, 2),
        "memory": asdict(memory),
        "latency": [asdict(r) for r in latency],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    rng = random.Random(args.seed)
    started = time.monotonic()
    machine: dict[str, Any] = {}
    sizes: list[dict[str, Any]] = []
    for entries in args.entries:
        log(f"generating {entries:,} entries")
        players, ties, scores = board_entries(entries, rng)
        formats = {
            name: _measure_format(name, players, ties, scores, args, rng, machine)
            for name in args.formats
        }
        sizes.append({"entries": entries, "formats": formats})
        del players, ties, scores
    total = round(time.monotonic() - started, 1)
    settings = {
        "entries": args.entries,
        "formats": args.formats,
        "calls": args.calls,
        "warmup_calls": WARMUP_CALLS,
        "chunk": args.chunk,
        "seed": args.seed,
        "zset_key": ZSET_KEY,
        "rank_value_limit": RANK_VALUE_LIMIT,
        "bucket_fill": FILL,
    }
    report = markdown(machine, settings, sizes, total)
    print(report)
    document = {"machine": machine, "settings": settings, "sizes": sizes, "total_seconds": total}
    save_results(args.out, "rank_index_memory", document, report)
    return 0
