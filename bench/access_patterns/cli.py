"""Latency of every access pattern through HTTP/GraphQL, next to the raw DynamoDB calls it needs.

``python -m bench.access_patterns [--entries 1000 10000 100000] [--requests 200]
[--op-seconds 20] [--out bench/results]``

For each board size the benchmark starts a fresh in-memory DynamoDB Local, creates a table,
loads the main board with that many players (one play each; a quarter of the plays also enter
a season board and a twentieth a daily board, see :mod:`bench.core.workload`, and every play a
write-sharded board of 8 partitions, whose pages are measured beside the main board's), serves
the real application on a loopback TCP port and, operation by operation, alternates a GraphQL
request over HTTP with the aioboto3 calls the same access pattern needs, sent on the
application's own DynamoDB client. The operations include the frontend's leaderboard page
and profile page (``examples/operations/``). An operation too slow for ``--requests`` in
``--op-seconds`` (a COUNT rank on a large board) is measured for that long, and at least 10
times. It reports p50/p95/p99 latency, the raw p50, their ratio, and the DynamoDB calls of a
request, printed as Markdown and written to ``access_patterns.json`` and
``access_patterns.md`` in ``--out``.

Boards up to :data:`SUBMIT_PATH_MAX` entries are loaded through ``submit_score``; larger ones
with BatchWriteItem, writing the very items the submission path writes.

This module is the command line. The benchmark itself is in its package: ``run`` (the run),
``operations``, ``raw_calls`` and ``raw_submit`` (each operation and its raw counterpart),
``measure`` (an operation timed against its raw calls) and ``report``; and in
:mod:`bench.core`: ``raw_dynamo`` (the raw calls' aioboto3 helpers), ``stack`` (the served
app), ``workload``, ``items`` and ``loading`` (the board and how it is loaded), ``measure``
(percentiles) and ``report`` (the files written).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.access_patterns.report import (
    report_footer,
    report_header,
    targets_markdown,
    write_results,
)
from bench.access_patterns.run import run
from bench.core.loading import SUBMIT_PATH_MAX
from bench.core.report import machine_info
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

DEFAULT_ENTRIES = (1_000, 10_000, 100_000)

__all__ = ["DEFAULT_ENTRIES", "main"]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.access_patterns",
        description="Latency of every access pattern through HTTP/GraphQL and as raw DynamoDB"
        " calls, against an in-memory DynamoDB Local.",
    )
    parser.add_argument(
        "--entries",
        type=int,
        nargs="+",
        default=list(DEFAULT_ENTRIES),
        help="board sizes to load, each on a fresh DynamoDB Local",
    )
    parser.add_argument(
        "--requests", type=int, default=200, help="measured requests per operation and size"
    )
    parser.add_argument(
        "--warmup", type=int, default=None, help="unrecorded requests first (default requests/10)"
    )
    parser.add_argument(
        "--op-seconds",
        type=float,
        default=20.0,
        help="time budget of one operation's measured requests (0: none)",
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.entries) or args.requests < 1:
        parser.error("--entries and --requests must be positive")
    if args.warmup is None:
        args.warmup = max(5, args.requests // 10)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    started = time.perf_counter()
    budget = args.op_seconds or None
    machine: dict[str, Any] = {}
    header = ""

    def announce(local: EmbeddedDynamoDB) -> None:
        nonlocal header
        if not machine:
            machine.update(machine_info(local))
            header = report_header(
                machine, requests=args.requests, warmup=args.warmup, budget_seconds=budget
            )
            print(header, flush=True)

    boards = run(
        default_cache_dir(),
        args.entries,
        requests=args.requests,
        warmup=args.warmup,
        budget_seconds=budget,
        seed=args.seed,
        on_start=announce,
    )
    total = time.perf_counter() - started
    footer = report_footer(total)
    print(targets_markdown(boards) + "\n", flush=True)
    print(footer, flush=True)

    settings = {
        "entries": args.entries,
        "requests": args.requests,
        "warmup": args.warmup,
        "op_seconds": budget,
        "seed": args.seed,
        "submit_path_max": SUBMIT_PATH_MAX,
    }
    write_results(
        args.out,
        machine=machine,
        settings=settings,
        boards=boards,
        total_seconds=total,
        header=header,
        footer=footer,
    )
    return 0
