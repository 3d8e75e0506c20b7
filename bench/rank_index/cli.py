"""Rank through GraphQL from the Redis rank index and from the table's COUNT, and the lag from a
play to the index.

``python -m bench.rank_index [--entries 10000 100000 1000000] [--requests 300]``

For each board size N the benchmark starts a fresh in-memory DynamoDB Local and redis-server
(:class:`~leaderboard.embedded_redis.EmbeddedRedis`), creates a table with its stream, and serves
two instances of the real application on loopback TCP ports, both on that table:

- the *index* instance, configured with the Redis URL and running the stream projector in its
  own process (``create_app(..., project_ranks=True)``, as ``leaderboard serve`` does in
  embedded mode), so its ranks come from the index;
- the *COUNT* instance, configured without Redis, so its ranks come from the table's
  ``Select=COUNT`` Queries.

**Loading.** Boards up to ``--bulk-max`` entries are written whole into the table with
BatchWriteItem, item for item what a player's creation and first play write
(:func:`bench.core.items.bulk_items`: guards and Score items at version 1, guards with their
rank and tie values); the index is then built with :meth:`RankIndex.rebuild`, and the
benchmark waits until the projector has read everything the stream holds. Larger boards are not
written whole:
the table gets the board item (``entryCount`` = N) and ``--probes`` players with their player,
Score, entry guard and session items, while the index is loaded directly into Redis with the
members, scores and player records it holds for all N entries (``rankindex/keys.py``,
``rankindex/players.py``), consistent with the probes' table items; then the board's state is
set to ready. Scores are uniform in 0..N/10, so many players tie.

**Rank latency.** ``query($p: ID!) { player(id: $p) { rank(leaderboardId: ...) { rank total
percentile } } }`` over HTTP for random probe players, one request at a time: ``--requests``
to the index instance after ``--warmup`` unrecorded ones, each alternating with the same calls
sent without HTTP and GraphQL (the raw floor); ``--count-requests`` to the COUNT instance after
``--count-warmup``, where the table holds every entry and N is at most ``--count-max``, each
followed by the same probe asked of the index instance. Every answer is checked against the rank
computed from the generated scores (standard competition ranking). Reported: p50/p95/p99, the
DynamoDB calls of a request (the app's :data:`~leaderboard.app.CALLS` counter), the server time
of ZCOUNT (``INFO commandstats``) and the round trip of the index's own lookup
(:meth:`RankIndex.ranks`) from this process.

**Stream lag.** ``--lag-submissions`` submitScore mutations, each improving a probe's entry: the
time from the mutation's response until the index's record of the player holds the new version
(polled every 5 ms), and that the sorted set then holds the new score.

**Before and after.** The rank latency and Redis's memory per entry are set beside those of
the index's earlier format, read from the ``rank_index.json`` already in ``--out`` (its own
numbers if it measured that format, else the ones it carried).

It prints Markdown tables and writes ``rank_index.json`` and ``rank_index.md`` in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from bench.rank_index.report import before_of, report, write_results
from bench.rank_index.results import Options
from bench.rank_index.run import run

__all__ = ["main"]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rank_index",
        description="Rank latency through GraphQL from the Redis rank index and from the"
        " table's COUNT, and the stream's lag to the index.",
    )
    parser.add_argument(
        "--entries",
        type=int,
        nargs="+",
        default=[10_000, 100_000, 1_000_000],
        help="board sizes",
    )
    parser.add_argument(
        "--requests", type=int, default=300, help="measured requests to the index instance"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=200,
        help="unrecorded requests to the index instance first (each size starts a cold JVM)",
    )
    parser.add_argument(
        "--count-requests",
        type=int,
        default=50,
        help="measured requests to the COUNT instance (one takes seconds at 100,000 entries)",
    )
    parser.add_argument(
        "--count-warmup", type=int, default=5, help="unrecorded requests to the COUNT instance"
    )
    parser.add_argument(
        "--bulk-max",
        type=int,
        default=100_000,
        help="largest board written whole into the table; larger ones are loaded into Redis",
    )
    parser.add_argument(
        "--count-max", type=int, default=100_000, help="largest board measured with COUNT"
    )
    parser.add_argument(
        "--probes", type=int, default=2_000, help="players in the table of a directly loaded board"
    )
    parser.add_argument(
        "--lag-submissions", type=int, default=200, help="submissions timed to the index"
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    args = parser.parse_args(argv)
    if min(*args.entries, args.requests, args.count_requests, args.probes) < 1:
        parser.error("--entries, --requests, --count-requests and --probes must be positive")
    if args.warmup < 0 or args.count_warmup < 0:
        parser.error("--warmup and --count-warmup must not be negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    options = Options(
        requests=args.requests,
        warmup=args.warmup,
        count_requests=args.count_requests,
        count_warmup=args.count_warmup,
        probes=args.probes,
        bulk_max=args.bulk_max,
        count_max=args.count_max,
        lag_submissions=args.lag_submissions,
    )
    previous = args.out / "rank_index.json"
    before = before_of(json.loads(previous.read_text()) if previous.exists() else None)
    started = time.perf_counter()
    results, machine = run(args.entries, options, args.seed)
    total = time.perf_counter() - started
    markdown = report(machine, options, results, total, before)
    print(markdown, flush=True)
    write_results(
        args.out,
        machine=machine,
        settings={"entries": args.entries, "seed": args.seed, **asdict(options)},
        results=results,
        total_seconds=total,
        markdown=markdown,
        before=before,
    )
    return 0
