"""Plays of distinct players on one board under DynamoDB's transaction-conflict rule, beside the
same load spread over several boards.

``python -m bench.hot_board [--clients 16] [--players 25] [--partitions 1 8] [--boards 16]
[--duration 30] [--prewarm 5] [--hold 0.010] [--quick] [--out bench/results]``

On a fresh in-memory DynamoDB Local, behind the fault proxy applying DynamoDB's
transaction-conflict rule (every transaction holding its items ``--hold`` seconds longer,
:mod:`bench.hot_board.proxy`), ``leaderboard serve --workers 1`` runs in its own process.
``--clients`` game-server clients, each with its own ``--players`` players, play
``submitScore`` one play at a time each (:mod:`bench.hot_board.clients`): first the same load
spread over ``--boards`` boards of one partition, then on one board of each number of
``--partitions``, each case on daily families' boards of its own (:mod:`bench.hot_board.cases`).
Each case is a burst of first entries (every player's first play, on a board that does not
exist yet), then ``--duration`` seconds of steady state (every player with an entry).

Reported per case and phase: acknowledged plays a second, p50/p99 latency, failed plays by
code, the transactions sent and the conflicts the proxy applied, on count shards and on other
items, with the most conflicted items (:mod:`bench.hot_board.conflicts`); after each case,
whether every board's ``entryCount`` equals its players entered. Judged against the targets:
no ``SUBMISSION_CONFLICT``; no conflict in the steady state; count-shard conflicts in the
burst at most 5 per 100 transactions; one board at least 90% of the plays a second of the
spread load. Writes ``hot_board.json`` and ``hot_board.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench.hot_board.report import failed_plays, write_results
from bench.hot_board.run import HotOptions, run
from dynamo.leaderboards import MAX_PARTITIONS

__all__ = ["main"]


def _parse(argv: Sequence[str] | None) -> HotOptions:
    parser = argparse.ArgumentParser(
        prog="python -m bench.hot_board",
        description="Plays of distinct players on one board through `leaderboard serve`, under"
        " DynamoDB's transaction-conflict rule, beside the same load spread over several"
        " boards.",
    )
    parser.add_argument("--clients", type=int, default=16, help="game-server clients")
    parser.add_argument("--players", type=int, default=25, help="players of each client")
    parser.add_argument(
        "--partitions",
        type=int,
        nargs="+",
        default=[1, 8],
        help="the partitions of the one-board cases, one case each",
    )
    parser.add_argument(
        "--boards",
        type=int,
        default=16,
        help="boards the same load is spread over, for the comparison (0: none)",
    )
    parser.add_argument(
        "--duration", type=float, default=30.0, help="seconds of each case's steady state"
    )
    parser.add_argument(
        "--prewarm", type=float, default=5.0, help="unrecorded seconds of plays before the cases"
    )
    parser.add_argument(
        "--hold",
        type=float,
        default=0.010,
        help="seconds each transaction holds its items at the proxy (default 10 ms)",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short smoke run: 4 clients of 5 players, 4 boards, 3 s steady states, 1 s pre-warm",
    )
    args = parser.parse_args(argv)
    if args.clients < 1 or args.players < 1 or args.boards < 0:
        parser.error("--clients and --players must be positive, --boards not negative")
    if any(n < 1 or n > MAX_PARTITIONS or n & (n - 1) for n in args.partitions):
        parser.error(f"--partitions must be powers of two up to {MAX_PARTITIONS}")
    if args.duration <= 0 or args.prewarm < 0 or args.hold < 0:
        parser.error("--duration must be positive, --prewarm and --hold not negative")
    quick = args.quick
    return HotOptions(
        clients=4 if quick else args.clients,
        players=5 if quick else args.players,
        partitions=tuple(args.partitions),
        boards=4 if quick else args.boards,
        duration=3.0 if quick else args.duration,
        prewarm=1.0 if quick else args.prewarm,
        hold=args.hold,
        seed=args.seed,
        out=args.out,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status (1 when a play
    failed)."""
    options = _parse(argv)
    result = run(options)
    print(write_results(options.out, result), flush=True)
    return 1 if failed_plays(result) else 0
