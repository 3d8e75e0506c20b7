"""What moderation costs: bans and erasures, timed and counted.

``python -m bench.moderation [--boards 10,100,300] [--sessions 1000,5000] [--repeat 3]
[--out bench/results]``

For each size the benchmark, ``--repeat`` times, starts a fresh in-memory DynamoDB Local, runs
a smaller untimed round in it (its JVM warms up), creates a table, loads it with BatchWriteItem
(see :mod:`bench.moderation.data`) and times one call of the dynamo layer's own function, the
one the GraphQL mutation calls:

- ``ban_player`` of a player with an entry on each of ``--boards`` boards (a second player
  has one too), then a Scan checks that no Score item of the banned player remains;
- ``erase_player`` of a player with ``--sessions`` sessions over 50 boards, its entry on
  each and a few play records, then a Scan checks that no item holds the player's id.

It reports the median, min and max time, the DynamoDB calls by operation, the items written
(and deleted) and, for erasures, items deleted per second; a check that fails stops the run.
The report is printed as Markdown and written to ``moderation.json`` and ``moderation.md``
in ``--out``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.core.report import machine_info, run_document, save_results
from bench.moderation.data import ERASURE_BOARDS, PLAY_RECORDS
from bench.moderation.report import markdown
from bench.moderation.run import run
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = ["DEFAULT_BOARDS", "DEFAULT_SESSIONS", "main", "sizes"]

DEFAULT_BOARDS = (10, 100, 300)
DEFAULT_SESSIONS = (1_000, 5_000)


def sizes(text: str) -> tuple[int, ...]:
    """Sizes written as ``10,100,300``: each a positive integer."""
    try:
        parsed = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if any(n < 1 for n in parsed):
        raise argparse.ArgumentTypeError(f"sizes must be positive: {text!r}")
    return parsed


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.moderation",
        description="Time and count a ban of a player on many boards and the erasure of a"
        " player with many sessions, against an in-memory DynamoDB Local.",
    )
    parser.add_argument(
        "--boards",
        type=sizes,
        default=DEFAULT_BOARDS,
        help="boards the banned player has an entry on, comma-separated (default 10,100,300)",
    )
    parser.add_argument(
        "--sessions",
        type=sizes,
        default=DEFAULT_SESSIONS,
        help="sessions of the erased player, comma-separated (default 1000,5000; at least"
        f" {ERASURE_BOARDS})",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per size")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if min(args.sessions) < max(ERASURE_BOARDS, PLAY_RECORDS):
        parser.error(f"--sessions must be at least {ERASURE_BOARDS}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    started = time.perf_counter()
    machine: dict[str, Any] = {}

    def announce(local: EmbeddedDynamoDB) -> None:
        if not machine:
            machine.update(machine_info(local))

    results = run(
        default_cache_dir(),
        boards=args.boards,
        sessions=args.sessions,
        repeat=args.repeat,
        on_start=announce,
    )
    settings = {
        "boards": list(args.boards),
        "sessions": list(args.sessions),
        "repeat": args.repeat,
        "erasure_boards": ERASURE_BOARDS,
        "play_records": PLAY_RECORDS,
    }
    report = markdown(machine, settings, results)
    print(report, flush=True)
    document = run_document(
        machine=machine,
        settings=settings,
        key="results",
        parts=results,
        total_seconds=time.perf_counter() - started,
    )
    save_results(args.out, "moderation", document, report)
    return 0
