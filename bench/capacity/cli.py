"""What DynamoDB bills for the service's operations, what the benchmark's mix costs, and the
plays per second one board takes.

``python -m bench.capacity [--sizes 1000 10000 100000] [--operations-size 10000]
[--mix-requests 400] [--hot-rate 25] [--hot-seconds 6] [--partitions 1 2 4 8 16 32 64]
[--sharded-players 200] [--rate 10000] [--quick] [--out bench/results]``

For each size a fresh DynamoDB Local is loaded with the benchmark's boards (:mod:`bench.core`)
and a player's rank is read by COUNT Queries. At the operations size a redis-server holds the
rank index, and the service, its response cache off, is measured through GraphQL: the top 100
with names, the leaderboard and profile pages, plays on a board of each operator and on three
boards, a rank from the index, and requests drawn from the mixed workload's mix; then, for each
operator, plays at a fixed rate on one board through the table layer's submission path, their
write units grouped by partition key and second; then, for each operator and each of
``--partitions``, a board of that many partitions played through the same path by
``--sharded-players`` players, first entries then steady plays, their write units grouped by
partition key and the items their transactions hold, with the figures these give at
``--rate`` plays a second (:mod:`bench.capacity.ceiling`); and the top 100 on a board of each
of ``--partitions`` holding the size's players. Every request is recorded with the items it
read and wrote (:mod:`bench.capacity.recorder`) and its units computed by DynamoDB's rules
(:mod:`bench.capacity.units`). Results go to ``capacity.json`` and ``capacity.md`` in
``--out``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.capacity.ceiling import TARGET_RATE
from bench.capacity.report import write_results
from bench.capacity.run import Plan, run, sizes_in_order
from bench.core.report import machine_info
from dynamo.leaderboards import MAX_PARTITIONS
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = ["QUICK", "main"]

QUICK = Plan(
    sizes=(1_000,),
    operations_size=1_000,
    mix_requests=40,
    hot_rate=10.0,
    hot_seconds=2.0,
    hot_players=50,
    partitions=(1, 16),
    sharded_players=50,
)
"""A short run: one size of 1,000 players, 40 requests of the mix, 2 s per hot board, boards
of 1 and 16 partitions played by 50 players."""

_POWERS = frozenset(2**k for k in range(MAX_PARTITIONS.bit_length()))


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.capacity",
        description="Request units per operation, the mix's cost, and one board's ceiling, "
        "against an in-memory DynamoDB Local.",
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--operations-size", type=int, default=10_000, help="the size the operations run at"
    )
    parser.add_argument("--mix-requests", type=int, default=400)
    parser.add_argument("--hot-rate", type=float, default=25.0, help="plays a second")
    parser.add_argument("--hot-seconds", type=float, default=6.0)
    parser.add_argument("--hot-players", type=int, default=200)
    parser.add_argument(
        "--partitions",
        type=int,
        nargs="+",
        default=[1, 2, 4, 8, 16, 32, 64],
        help="the write-sharded boards' partitions (powers of two up to 64)",
    )
    parser.add_argument("--sharded-players", type=int, default=200)
    parser.add_argument(
        "--rate", type=float, default=TARGET_RATE, help="plays a second of the sharded figures"
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--quick", action="store_true", help="a short run (1,000 players)")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    args = parser.parse_args(argv)
    if args.quick:
        return args
    positive = [*args.sizes, args.mix_requests, args.hot_players, args.sharded_players]
    if min(positive) < 1 or min(args.hot_rate, args.hot_seconds, args.rate) <= 0:
        parser.error("sizes, requests, players, rates and seconds must be positive")
    if any(n not in _POWERS for n in args.partitions):
        parser.error(f"--partitions must be powers of two up to {MAX_PARTITIONS}")
    if args.operations_size not in args.sizes:
        parser.error("--operations-size must be one of --sizes")
    return args


def plan_of(args: argparse.Namespace) -> Plan:
    """The plan the command line asks for."""
    if args.quick:
        return QUICK
    return Plan(
        sizes=sizes_in_order(args.sizes),
        operations_size=args.operations_size,
        mix_requests=args.mix_requests,
        hot_rate=args.hot_rate,
        hot_seconds=args.hot_seconds,
        hot_players=args.hot_players,
        seed=args.seed,
        partitions=tuple(sorted(set(args.partitions))),
        sharded_players=args.sharded_players,
        rate=args.rate,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurement as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    plan = plan_of(args)
    machine: dict[str, Any] = {}

    def announce(local: EmbeddedDynamoDB) -> None:
        if not machine:
            machine.update(machine_info(local))

    started = time.perf_counter()
    results = run(default_cache_dir(), plan, on_start=announce)
    settings = {
        "sizes": list(plan.sizes),
        "operations_size": plan.operations_size,
        "mix_requests": plan.mix_requests,
        "hot_rate": plan.hot_rate,
        "hot_seconds": plan.hot_seconds,
        "hot_players": plan.hot_players,
        "seed": plan.seed,
        "partitions": list(plan.partitions),
        "sharded_players": plan.sharded_players,
        "rate": plan.rate,
    }
    text = write_results(
        args.out,
        results,
        machine=machine,
        settings=settings,
        seconds=time.perf_counter() - started,
    )
    print(text, flush=True)
    return 0
