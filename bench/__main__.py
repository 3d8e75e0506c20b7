"""``python -m bench``: the whole benchmark in order (what ``make bench`` runs).

1. :mod:`bench.access_patterns`: every access pattern and the frontend's pages through
   HTTP/GraphQL next to their raw DynamoDB calls, at 1,000, 10,000 and 100,000 entries, each
   size on a fresh DynamoDB Local;
2. :mod:`bench.mixed`: the mixed workload (80% reads, 20% submissions) against
   ``leaderboard serve`` in its own process at 1, 8, 32 and 64 concurrent clients;
3. :mod:`bench.fleet`: the same workload at 8 and 32 clients as the raw calls the service makes
   (the floor of the design), then against the service with 1 worker and with one worker per
   core, its response cache off and on; and the top-100 page alone at one client;
4. :mod:`bench.attack`: the mixed workload at 8 clients alone, then while 4 anonymous attackers
   send the costliest documents the limits admit;
5. :mod:`bench.capacity`: the request units of each operation and of the mix, its cost, and
   the plays per second one board takes before its partition's write ceiling;
6. :mod:`bench.core.charts`: the PNG charts of the first two (the fleet draws its own).

Results go to ``bench/results/`` (or ``--out``). The exit status is 1 when a part failed or a
request of the mixed workload failed (under attack too); the parts after a failed one still
run.
"""

from __future__ import annotations

import argparse
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.access_patterns import cli as access_patterns
from bench.attack import cli as attack
from bench.capacity import cli as capacity
from bench.core import charts
from bench.core.report import log
from bench.fleet import cli as fleet
from bench.mixed import cli as mixed

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="The whole benchmark: access patterns, mixed workload, against the floor, under"
        " attack, capacity and cost, charts.",
    )
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short smoke run (1,000 and 10,000 entries, 30 requests; 8 s levels and runs;"
        " capacity at 1,000 players)",
    )
    args = parser.parse_args(argv)
    out = ["--out", str(args.out)]
    patterns_args, mixed_args, attack_args = list(out), list(out), list(out)
    fleet_args, capacity_args = list(out), list(out)
    if args.quick:
        patterns_args += ["--entries", "1000", "10000", "--requests", "30", "--op-seconds", "5"]
        mixed_args += ["--duration", "8", "--warmup", "2"]
        fleet_args += ["--quick"]
        attack_args += ["--duration", "8", "--warmup", "2", "--prewarm", "3"]
        capacity_args += ["--quick"]
    parts: list[tuple[str, Callable[[], int]]] = [
        ("access patterns", lambda: access_patterns.main(patterns_args)),
        ("mixed workload", lambda: mixed.main(mixed_args)),
        ("against the floor", lambda: fleet.main(fleet_args)),
        ("under attack", lambda: attack.main(attack_args)),
        ("capacity and cost", lambda: capacity.main(capacity_args)),
        ("charts", lambda: charts.main(out)),
    ]
    status = 0
    started = time.perf_counter()
    for name, part in parts:
        begun = time.perf_counter()
        log(f"== {name} ==")
        try:
            code = part()
        except Exception:
            traceback.print_exc()
            code = 1
        log(f"== {name}: exit {code} after {time.perf_counter() - begun:.0f} s ==")
        status = status or code
    log(f"== bench: {time.perf_counter() - started:.0f} s in all ==")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
