"""The mixed workload against the floor of its design, with workers and with the response
cache.

``python -m bench.fleet [--clients 8 32] [--workers CORES] [--duration 15] [--warmup 5]
[--entries 10000] [--generators 1] [--prewarm 8] [--single-duration 10] [--quick]
[--out bench/results]``

On ONE fresh DynamoDB Local, Redis and ``leaderboard rank-indexer`` with the boards of
:mod:`bench.mixed` loaded once (``--entries`` players), the same closed-loop clients
(:mod:`bench.core.load.loadgen`: the same kinds, weights, players and seeds, timing and
recording) run at each ``--clients`` against, in turn:

1. the raw calls: each request sent as the aioboto3 calls and rank-index reads the service
   makes for it, in the same rounds (:mod:`bench.core.load.floor`), the floor of the design;
2. ``leaderboard serve`` with 1 worker, its response cache off (``LEADERBOARD_CACHE_MB=0``),
   then on (the default with Redis);
3. ``leaderboard serve --workers W`` (``--workers``, the machine's cores by default), cache
   off, then on.

Only the service process is restarted between configurations; each one is pre-warmed
(``--prewarm`` seconds, unrecorded) before its levels. Recorded for each configuration and
level: requests per second, p50/p99 overall and per kind, errors, the service's CPU time
per request (master and workers added up), the CPU of every other process (DynamoDB Local,
Redis, the projector, the load generator), and the response cache's hit ratio (from
``/metrics`` before and after the window). Then, at one client, the top-100 page with names
alone (``--single-duration`` seconds) for the raw calls and for one worker with the cache off
and on.

Writes ``fleet.json``, ``fleet.md`` (with "Against the targets") and ``fleet.png`` to ``--out``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from bench.core.load.options import Options
from bench.core.report import log
from bench.fleet.chart import fleet_chart
from bench.fleet.report import write_results
from bench.fleet.run import FleetOptions, run

__all__ = ["main"]


def _parse(argv: Sequence[str] | None) -> FleetOptions:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fleet",
        description="The mixed workload as raw calls (the floor), then against `leaderboard"
        " serve` with 1 and W workers, its response cache off and on, on one loaded table.",
    )
    parser.add_argument("--clients", type=int, nargs="+", default=[8, 32])
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="service workers of the multi-process configurations (default: the cores)",
    )
    parser.add_argument("--duration", type=float, default=15.0, help="measured seconds a level")
    parser.add_argument("--warmup", type=float, default=5.0, help="unrecorded seconds first")
    parser.add_argument("--entries", type=int, default=10_000, help="players on the main board")
    parser.add_argument(
        "--generators", type=int, default=1, help="load-generator processes (at most clients)"
    )
    parser.add_argument(
        "--prewarm", type=float, default=8.0, help="unrecorded seconds before each configuration"
    )
    parser.add_argument(
        "--single-duration",
        type=float,
        default=10.0,
        help="measured seconds of the top-100 page alone at one client",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short smoke run: 1,000 entries, 3 s levels, 1 s warm-ups and pre-warms",
    )
    args = parser.parse_args(argv)
    if min(args.clients) < 1 or args.entries < 20 or args.generators < 1 or args.workers < 1:
        parser.error("--clients, --workers and --generators must be positive, --entries >= 20")
    if args.duration <= 0 or args.warmup < 0 or args.prewarm < 0 or args.single_duration <= 0:
        parser.error("--duration must be positive, --warmup and --prewarm not negative")
    quick = args.quick
    options = Options(
        clients=args.clients,
        duration=3.0 if quick else args.duration,
        warmup=1.0 if quick else args.warmup,
        entries=1_000 if quick else args.entries,
        ranks="index",
        generators=args.generators,
        seed=args.seed,
        out=args.out,
        profile=None,
        prewarm=1.0 if quick else args.prewarm,
    )
    return FleetOptions(
        options=options,
        workers=args.workers,
        single_duration=3.0 if quick else args.single_duration,
        single_warmup=1.0 if quick else 2.0,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status (1 when any
    request or raw call failed)."""
    fleet = _parse(argv)
    result = run(fleet)
    print(write_results(fleet.options.out, result), flush=True)
    log(f"wrote {fleet_chart(result, fleet.options.out / 'fleet.png')}")
    failed = sum(
        sum(level.errors.values())
        for measured in result.measured
        for level in [*measured.levels, *([measured.single] if measured.single else [])]
    )
    return 1 if failed else 0
