"""The mixed workload under attack: legitimate clients' latency while anonymous attackers send
the costliest documents the limits admit, against the same latency without them.

``python -m bench.attack [--clients 8] [--attackers 4] [--duration 20] [--warmup 5]
[--entries 10000] [--prewarm 10] [--probes 3] [--limit NAME=VALUE ...] [--profile]
[--out bench/results]``

The stack is the mixed workload's (:mod:`bench.core.load.stack`: a fresh DynamoDB Local,
redis-server and the projector, the boards loaded, ``leaderboard serve`` in its own process),
with the service told to trust one proxy's X-Forwarded-For
(``LEADERBOARD_LIMIT_TRUSTED_PROXY_HOPS=1``), as behind a load balancer, and with each
``--limit NAME=VALUE`` as ``LEADERBOARD_LIMIT_<NAME>``. Every client, legitimate or not, claims
an address of its own there, so each anonymous attacker is held to its own allowance of cost
points, as on the internet, and the legitimate clients' requests are not charged to anyone
else's.

1. Each document of :mod:`bench.attack.documents` is sent ``--probes`` times, one at a time;
   the one with the slowest median answer is the attackers' document.
2. Run 1: ``--clients`` clients of the mixed workload (:mod:`bench.core.load.loadgen`, 80%
   reads, 20% submissions, with the API key as in :mod:`bench.mixed`) alone.
3. Run 2: the same clients, while ``--attackers`` anonymous attackers, in a process of their
   own, send that document in a closed loop, each as fast as it is answered, ignoring
   Retry-After.

Recorded: the legitimate clients' p50/p95/p99 overall and per kind and their errors by code,
the attackers' answers by status and code (and the DynamoDB calls of those that ran), the
service's CPU and resident memory. The target: the legitimate p99 under attack at most
:data:`bench.core.report.ATTACK_P99_RATIO` times the p99 without attackers. With ``--profile``,
py-spy samples the service during run 2 (:mod:`bench.core.load.hotspots`).

Writes ``attack.json`` and ``attack.md`` to ``--out``; the exit status is 1 when a legitimate
request failed (as :mod:`bench.mixed`'s, whatever the verdict against the target).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench.attack.report import write_results
from bench.attack.run import (
    CLIENT_NETWORK,
    LIMIT_NAMES,
    SERVICE_ENVIRONMENT,
    AttackOptions,
    run,
)
from bench.core.load.options import Options

__all__ = ["main"]


def _parse(argv: Sequence[str] | None) -> AttackOptions:
    parser = argparse.ArgumentParser(
        prog="python -m bench.attack",
        description="The mixed workload's latency while anonymous attackers send the costliest"
        " documents the limits admit, against the same run without them.",
    )
    parser.add_argument("--clients", type=int, default=8, help="legitimate clients")
    parser.add_argument("--attackers", type=int, default=4, help="anonymous attackers")
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds a run")
    parser.add_argument("--warmup", type=float, default=5.0, help="unrecorded seconds first")
    parser.add_argument("--entries", type=int, default=10_000, help="players on the main board")
    parser.add_argument(
        "--generators", type=int, default=1, help="load-generator processes of the clients"
    )
    parser.add_argument(
        "--prewarm", type=float, default=10.0, help="unrecorded seconds of load before run 1"
    )
    parser.add_argument(
        "--probes", type=int, default=3, help="times each attack document is sent to pick one"
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a service limit (leaderboard.config.Limits) other than its default, e.g."
        " anonymous_cost_per_second=50",
    )
    parser.add_argument("--profile", action="store_true", help="py-spy on the service in run 2")
    parser.add_argument("--seed", type=int, default=7, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    args = parser.parse_args(argv)
    if min(args.clients, args.attackers, args.generators, args.probes) < 1:
        parser.error("--clients, --attackers, --generators and --probes must be positive")
    if args.entries < 100:
        parser.error("--entries must be at least 100 (the documents name 100 players)")
    if args.duration <= 0 or args.warmup < 0 or args.prewarm < 0:
        parser.error("--duration must be positive, --warmup and --prewarm not negative")
    environment = dict(SERVICE_ENVIRONMENT)
    for limit in args.limit:
        name, equals, value = limit.partition("=")
        if not equals or name.upper() not in LIMIT_NAMES:
            parser.error(f"--limit {limit}: not NAME=VALUE of a limit of leaderboard.config.Limits")
        environment[f"LEADERBOARD_LIMIT_{name.upper()}"] = value
    mixed = Options(
        clients=[args.clients],
        duration=args.duration,
        warmup=args.warmup,
        entries=args.entries,
        ranks="index",
        generators=args.generators,
        seed=args.seed,
        out=args.out,
        profile=None,
        prewarm=args.prewarm,
        network=CLIENT_NETWORK,
    )
    return AttackOptions(
        args.clients, args.attackers, args.probes, args.profile, environment, mixed
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as ``argv`` asks; the exit status (1 when a legitimate request
    failed)."""
    options = _parse(argv)
    result = run(options)
    print(write_results(options.mixed.out, result), flush=True)
    failed = sum(result.without.errors.values()) + sum(result.under_attack.errors.values())
    return 1 if failed else 0
