"""What closing a season costs: a board frozen and its final standings written, timed, counted
and sized.

``python -m bench.season_close [--entries 10000 100000] [--partitions 1] [--seed 42]
[--out bench/results]``

For each number of ``--entries`` a fresh in-memory DynamoDB Local is loaded with one board of
that many entrants on ``--partitions`` partitions, whose end is an hour past, and the board is
closed by the dynamo layer's own ``close_board`` (:mod:`bench.season_close.run`). Reported per
board: the close's time, in all and per step (freezing counts, freezing entries, writing
results), entrants a second, the DynamoDB calls and the read and write units they consumed
(:mod:`bench.season_close.units`); the bytes each kind of item takes to store, the Result items
beside the live board's Score items, entry guards and count shards
(:mod:`bench.season_close.storage`); and the units of reading a page of the final standings,
one player's result and results, beside a page of the live board. A board closed with another
count than its entrants, or with another number of Result items, stops the run. Writes
``season_close.json`` and ``season_close.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.core.report import machine_info
from bench.season_close.report import write_results
from bench.season_close.run import run
from dynamo.leaderboards import MAX_PARTITIONS
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = ["DEFAULT_ENTRIES", "main"]

DEFAULT_ENTRIES = (10_000, 100_000)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.season_close",
        description="Close a board of each size (freeze it, write its final standings) on an"
        " in-memory DynamoDB Local: time per step, request units, storage by kind.",
    )
    parser.add_argument(
        "--entries",
        type=int,
        nargs="+",
        default=list(DEFAULT_ENTRIES),
        help="entrants of each board, one board each (default 10000 100000)",
    )
    parser.add_argument(
        "--partitions", type=int, default=1, help="partitions of every board (default 1)"
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of the boards' scores")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    args = parser.parse_args(argv)
    if min(args.entries) < 1:
        parser.error("--entries must be positive")
    n = args.partitions
    if n < 1 or n > MAX_PARTITIONS or n & (n - 1):
        parser.error(f"--partitions must be a power of two up to {MAX_PARTITIONS}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    machine: dict[str, Any] = {}

    def announce(local: EmbeddedDynamoDB) -> None:
        if not machine:
            machine.update(machine_info(local))

    started = time.perf_counter()
    entries = sorted(set(args.entries))
    runs = run(default_cache_dir(), entries, args.partitions, args.seed, announce)
    settings = {"entries": entries, "partitions": args.partitions, "seed": args.seed}
    text = write_results(
        args.out, runs, machine=machine, settings=settings, seconds=time.perf_counter() - started
    )
    print(text, flush=True)
    return 0
