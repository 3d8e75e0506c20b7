"""The service's CPU time per request of each request kind, and its ratio to
``{ __typename }``'s.

``python -m bench.cpu [--entries 1000] [--requests 500] [--warmup 50] [--rounds 3]
[--kinds KEY ...] [--seed 7] [--out bench/results] [--baseline PATH]``

``python -m bench.cpu --profile KEY [--requests 500] [--profile-stats FILE]``

On one fresh DynamoDB Local, each configuration gets a table of its own loaded with the
benchmark's boards (``--entries`` players on the main board, every one named) and its own
``leaderboard serve --workers 1``: without Redis (the response cache off, ranks from COUNT
queries), and with a fresh redis-server and the rank index's projector (the response cache
on). One client sends each kind's requests one at a time (:mod:`bench.cpu.kinds`):
``--warmup`` unmeasured, then ``--requests`` measured, the service process's CPU time read
from ``/proc`` before and after (:mod:`bench.cpu.measure`). Every kind is measured once a
round for ``--rounds`` rounds, the order turned by one each round; reported per kind: the
median CPU per request over the rounds, its range, its ratio to ``{ __typename }``'s median
(without the cache) of the same run, the client's wall-clock p50 and, with the cache, its
hits. Prints the table and writes ``cpu.json`` and ``cpu.md`` to ``--out``.

With ``--baseline PATH``, another checkout of this repository with its own ``.venv`` (``make
install`` there), each configuration also gets a table of its own loaded alike and that
checkout's ``PATH/.venv/bin/leaderboard serve`` on it (and, with the cache, its projector):
every kind is sent to both services in the same rounds, one after the other, this
checkout's first in odd rounds and the baseline's first in even ones; the report gives the
baseline's median and ratio beside this checkout's, the change (after over before) and both
commits.

With ``--profile KEY``, only that kind is sent, to a service run under cProfile
(:mod:`bench.cpu.profiled_serve`, its clock the process's CPU time), profiled over the
measured requests alone; it prints the top functions by total and by cumulative time per
request, and writes no results file (``--profile-stats`` keeps the statistics, for pstats
or snakeviz).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench.core.processes import leaderboard_command
from bench.cpu.kinds import KIND_KEYS
from bench.cpu.report import write_results
from bench.cpu.run import CpuOptions, profile, run

__all__ = ["main"]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.cpu",
        description="The CPU time of `leaderboard serve --workers 1` per request of each kind,"
        " and its ratio to `{ __typename }`, with the response cache off and a top-100 page"
        " from the response cache.",
    )
    parser.add_argument("--entries", type=int, default=1_000, help="players on the main board")
    parser.add_argument(
        "--requests", type=int, default=500, help="measured requests of each kind in each round"
    )
    parser.add_argument(
        "--warmup", type=int, default=50, help="unmeasured requests of each kind before them"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds over every kind")
    parser.add_argument(
        "--kinds",
        nargs="+",
        choices=KIND_KEYS,
        default=[],
        metavar="KIND",
        help="measure these kinds only",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="PATH",
        help="also measure the service of this other checkout (PATH/.venv/bin/leaderboard),"
        " in the same rounds, and report the change from it",
    )
    parser.add_argument(
        "--profile",
        choices=KIND_KEYS,
        default=None,
        metavar="KIND",
        help=f"profile this kind's requests in the service instead ({', '.join(KIND_KEYS)})",
    )
    parser.add_argument(
        "--profile-stats", type=Path, default=None, help="with --profile, keep its statistics"
    )
    args = parser.parse_args(argv)
    if args.entries < 1 or args.requests < 1 or args.rounds < 1 or args.warmup < 0:
        parser.error("--entries, --requests and --rounds must be positive, --warmup not negative")
    if args.profile_stats is not None and args.profile is None:
        parser.error("--profile-stats goes with --profile")
    if args.baseline is not None:
        if args.profile is not None:
            parser.error("--baseline does not go with --profile")
        script = Path(leaderboard_command(args.baseline.resolve())[0])
        if not script.is_file():
            parser.error(f"--baseline: no {script} (`make install` there makes it)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (or the profile) as the command line ``argv`` asks; the exit
    status."""
    args = _parse(argv)
    options = CpuOptions(
        entries=args.entries,
        requests=args.requests,
        warmup=args.warmup,
        rounds=args.rounds,
        seed=args.seed,
        out=args.out,
        only=tuple(args.kinds),
        baseline=args.baseline,
    )
    if args.profile is not None:
        print(profile(options, args.profile, keep=args.profile_stats), flush=True)
        return 0
    print(write_results(options.out, run(options)), flush=True)
    return 0
