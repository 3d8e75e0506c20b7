"""Throughput and latency of a mixed frontend workload against the service run as its own
process, at several numbers of concurrent clients.

``python -m bench.mixed [--clients 1 8 32 64] [--duration 20] [--warmup 5] [--entries 10000]
[--ranks index|count] [--generators 1] [--prewarm 10] [--profile 32]
[--out bench/results]``

The benchmark starts a fresh in-memory DynamoDB Local and, with ``--ranks index`` (the default, the
configuration docs/how-to/rank-index.md recommends for boards of this size), redis-server and
``leaderboard rank-indexer`` (the stream projector, a process of its own as the Lambda is on AWS).
It creates a table and loads the main board with ``--entries`` players, a season board with a
quarter of them and a daily board with a twentieth (:mod:`bench.core.workload`, written with
BatchWriteItem, item for item what the submission path writes), builds the rank index of each
board and waits until the projector has caught up. Then it starts ``leaderboard serve`` on that
table in a process of its own, configured through the environment (``LEADERBOARD_*``).

After an unrecorded pre-warm (``--prewarm`` seconds at 8 clients: the service's and DynamoDB
Local's caches and JIT), for each number of clients, closed-loop clients
(:mod:`bench.core.load.loadgen`, in ``--generators`` worker processes) send the frontend's
operations for ``--warmup`` seconds and then for the measured ``--duration``: the leaderboard page
(``LeaderboardPage``, first 100), the profile page (``PlayerProfile`` on the three boards),
around-me (``AroundMe``), a player's sessions and rank, and ``SubmitScore`` (a play entering all
three boards, with a fresh submission id): 80% reads, 20% submissions
(:data:`bench.core.load.loadgen.MIX`). Recorded: requests per second,
p50/p95/p99 overall and per kind, errors by code, the service's resident memory (``VmRSS``
sampled every 0.25 s, and ``VmHWM``, its peak) and the CPU time of every process involved
(service, DynamoDB Local, Redis, projector, load generator) and of the whole machine, as cores
kept busy over the window.

With ``--profile N`` one more level of N clients runs with ``py-spy record`` attached to the
service for its window; the samples and a summary of the hot spots are written beside the
results (:mod:`bench.core.load.hotspots`).

Writes ``mixed.json`` and ``mixed.md`` (with "Against the targets") to ``--out``, and the
charts of :mod:`bench.core.charts`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench.core.charts import write_charts
from bench.core.load.options import PREWARM_CLIENTS, Options
from bench.core.report import log
from bench.mixed.report import write_results
from bench.mixed.run import run

__all__ = ["main"]


def _parse(argv: Sequence[str] | None) -> Options:
    parser = argparse.ArgumentParser(
        prog="python -m bench.mixed",
        description="Throughput and latency of a mixed frontend workload (80%% reads, 20%%"
        " submissions) against `leaderboard serve` in its own process, at several numbers of"
        " concurrent clients.",
    )
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds a level")
    parser.add_argument("--warmup", type=float, default=5.0, help="unrecorded seconds first")
    parser.add_argument("--entries", type=int, default=10_000, help="players on the main board")
    parser.add_argument(
        "--ranks",
        choices=["index", "count"],
        default="index",
        help="ranks from the Redis rank index (default) or from COUNT queries",
    )
    parser.add_argument(
        "--generators", type=int, default=1, help="load-generator processes (at most clients)"
    )
    parser.add_argument(
        "--prewarm",
        type=float,
        default=10.0,
        help=f"unrecorded seconds at {PREWARM_CLIENTS} clients before the first level (the"
        " service's and DynamoDB Local's caches and JIT)",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--profile",
        type=int,
        default=None,
        metavar="CLIENTS",
        help="one more level of CLIENTS clients with py-spy attached to the service",
    )
    args = parser.parse_args(argv)
    if min(args.clients) < 1 or args.entries < 20 or args.generators < 1:
        parser.error("--clients and --generators must be positive, --entries at least 20")
    if args.duration <= 0 or args.warmup < 0 or args.prewarm < 0:
        parser.error("--duration must be positive, --warmup and --prewarm not negative")
    return Options(
        clients=args.clients,
        duration=args.duration,
        warmup=args.warmup,
        entries=args.entries,
        ranks=args.ranks,
        generators=args.generators,
        seed=args.seed,
        out=args.out,
        profile=args.profile,
        prewarm=args.prewarm,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status (1 when any
    request failed)."""
    options = _parse(argv)
    result = run(options)
    print(write_results(options.out, result), flush=True)
    for path in write_charts(options.out):
        log(f"wrote {path}")
    failed = sum(sum(level.errors.values()) for level in result.levels)
    return 1 if failed else 0
