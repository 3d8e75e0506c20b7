"""The mixed workload under attack: legitimate clients' latency while anonymous attackers send
the costliest documents the limits admit, against the same latency without them.

``python -m bench.attack [--clients 8] [--attackers 4] [--duration 20] [--warmup 5]
[--entries 10000] [--prewarm 10] [--probes 3] [--limit NAME=VALUE ...] [--profile]
[--out bench/results]``

The stack is :mod:`bench.mixed`'s (a fresh DynamoDB Local, redis-server and the projector, the
boards loaded, ``leaderboard serve`` in its own process), with the service told to trust one
proxy's X-Forwarded-For (``LEADERBOARD_LIMIT_TRUSTED_PROXY_HOPS=1``), as behind a load
balancer, and with each ``--limit NAME=VALUE`` as ``LEADERBOARD_LIMIT_<NAME>``. Every client,
legitimate or not, claims an address of its own there, so each anonymous attacker is held to
its own allowance of cost points, as on the internet, and the legitimate clients' requests are
not charged to anyone else's.

1. Each document of :mod:`bench.attack_documents` is sent ``--probes`` times, one at a time;
   the one with the slowest median answer is the attackers' document.
2. Run 1: ``--clients`` clients of the mixed workload (:mod:`bench.loadgen`, 80% reads, 20%
   submissions, with the API key as in :mod:`bench.mixed`) alone.
3. Run 2: the same clients, while ``--attackers`` anonymous attackers, in a process of their
   own, send that document in a closed loop, each as fast as it is answered, ignoring
   Retry-After.

Recorded: the legitimate clients' p50/p95/p99 overall and per kind and their errors by code,
the attackers' answers by status and code (and the DynamoDB calls of those that ran), the
service's CPU and resident memory. The target: the legitimate p99 under attack at most
:data:`bench.report.ATTACK_P99_RATIO` times the p99 without attackers. With ``--profile``,
py-spy samples the service during run 2 (:mod:`bench.hotspots`).

Writes ``attack.json`` and ``attack.md`` to ``--out``; the exit status is 1 when a legitimate
request failed (as :mod:`bench.mixed`'s, whatever the verdict against the target).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from bench.attack_documents import AttackDocument, attack_documents
from bench.attackers import AttackerResult, AttackPlan, ProbeResult, probe, run_attackers
from bench.hotspots import HotspotReport
from bench.measure import percentiles
from bench.mixed import (
    LevelResult,
    Options,
    Stack,
    level_line,
    measure_level,
    running_stack,
    settings_of,
    setup_of,
)
from bench.report import ATTACK_P99_RATIO, log
from leaderboard.config import Limits

__all__ = [
    "ATTACKER_NETWORK",
    "CLIENT_NETWORK",
    "PROBE_NETWORK",
    "AttackOptions",
    "AttackRunResult",
    "AttackerStats",
    "main",
    "run",
]

CLIENT_NETWORK = 1
"""Legitimate clients claim addresses in 10.1.0.0/16 ..."""
ATTACKER_NETWORK = 66
"""... attackers in 10.66.0.0/16 ..."""
PROBE_NETWORK = 200
"""... and the probes of each document in 10.<200 + its number>.0.0/16."""
SERVICE_ENVIRONMENT = {"LEADERBOARD_LIMIT_TRUSTED_PROXY_HOPS": "1"}
_LIMIT_NAMES = {spec.name.upper() for spec in fields(Limits)}


@dataclass(frozen=True)
class AttackOptions:
    clients: int
    attackers: int
    probes: int
    profile: bool
    environment: dict[str, str]
    """The service's environment beyond :func:`bench.processes.service_env`'s."""
    mixed: Options
    """The stack's and the legitimate clients' options."""


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
        if not equals or name.upper() not in _LIMIT_NAMES:
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


# -- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeStats:
    """One attack document sent alone, one request at a time."""

    name: str
    description: str
    size: int
    """The length of its list."""
    cost: int
    p50_ms: float
    max_ms: float
    dynamodb_calls: int
    """The median of the DynamoDB calls each request reported."""
    outcomes: dict[str, int]


@dataclass(frozen=True)
class AttackerStats:
    """What the attackers got in run 2's window."""

    attackers: int
    document: str
    cost: int
    requests: int
    requests_per_second: float
    outcomes: dict[str, int]
    """Answers by ``"<status> <code>"``."""
    p50_ms: dict[str, float]
    """The median latency of each outcome."""
    ran_per_second: float
    """Requests that ran (answered 200) per second."""
    dynamodb_calls_per_second: float
    cpu_cores: float
    """The attackers' own process."""


@dataclass(frozen=True)
class AttackRunResult:
    machine: dict[str, Any]
    settings: dict[str, Any]
    setup: dict[str, Any]
    probes: list[ProbeStats]
    without: LevelResult
    under_attack: LevelResult
    attackers: AttackerStats
    p99_ratio: float
    """Legitimate p99 under attack over the p99 without attackers."""
    target_met: bool
    service_peak_rss_mib: float
    total_seconds: float
    hotspots: HotspotReport | None = None
    notes: list[str] = field(default_factory=list)


# -- the run -------------------------------------------------------------------------------


def _probe_all(stack: Stack, times: int) -> list[tuple[AttackDocument, ProbeStats]]:
    probed: list[tuple[AttackDocument, ProbeStats]] = []
    for number, document in enumerate(attack_documents()):
        result: ProbeResult = probe(
            stack.service.url,
            name=document.name,
            cost=document.cost,
            body=document.body(),
            network=PROBE_NETWORK + number,
            times=times,
        )
        outcomes: dict[str, int] = {}
        for answer in result.answers:
            outcomes[answer.outcome] = outcomes.get(answer.outcome, 0) + 1
        stats = ProbeStats(
            name=document.name,
            description=document.description,
            size=document.size,
            cost=document.cost,
            p50_ms=statistics.median(a.milliseconds for a in result.answers),
            max_ms=max(a.milliseconds for a in result.answers),
            dynamodb_calls=round(statistics.median(a.dynamodb_calls for a in result.answers)),
            outcomes=outcomes,
        )
        log(
            f"[attack] {stats.name} (cost {stats.cost}): p50 {stats.p50_ms:.0f} ms,"
            f" {stats.dynamodb_calls} DynamoDB calls, {outcomes}"
        )
        probed.append((document, stats))
    return probed


def _attacker_stats(
    result: AttackerResult, options: AttackOptions, document: AttackDocument
) -> AttackerStats:
    window = options.mixed.duration
    requests = sum(result.outcomes.values())
    ran = sum(n for outcome, n in result.outcomes.items() if outcome.startswith("200 "))
    return AttackerStats(
        attackers=options.attackers,
        document=document.name,
        cost=document.cost,
        requests=requests,
        requests_per_second=requests / window,
        outcomes=dict(sorted(result.outcomes.items())),
        p50_ms={k: percentiles(v)[0] for k, v in sorted(result.latencies.items())},
        ran_per_second=ran / window,
        dynamodb_calls_per_second=result.dynamodb_calls / window,
        cpu_cores=round(result.cpu_seconds / window, 3),
    )


def _with_attackers_cpu(level: LevelResult, cores: float) -> LevelResult:
    """``level`` with the attackers' process as a CPU column of its own, not in *other*."""
    cpu = dict(level.cpu_cores)
    cpu["attackers"] = cores
    cpu["other"] = round(max(0.0, cpu.get("other", 0.0) - cores), 3)
    return replace(level, cpu_cores=cpu)


def run(options: AttackOptions) -> AttackRunResult:
    """Set up the stack, pick the document, run without and with attackers."""
    started = time.perf_counter()
    mixed = options.mixed
    workers = max(1, min(mixed.generators, options.clients)) + 1
    with running_stack(mixed, workers=workers, environment=options.environment) as stack:
        probed = _probe_all(stack, options.probes)
        document, _ = max(probed, key=lambda pair: pair[1].p50_ms)
        log(f"[attack] the attackers send {document.name}")
        without, _, _ = measure_level(stack, mixed, options.clients, level=0)
        log(level_line(without, "attack: without"))

        def companions(start_at: float) -> list[Future[Any]]:
            plan = AttackPlan(
                url=stack.service.url,
                attackers=options.attackers,
                network=ATTACKER_NETWORK,
                body=document.body(),
                start_at=start_at,
                warmup_seconds=mixed.warmup,
                duration_seconds=mixed.duration,
            )
            return [stack.pool.submit(run_attackers, plan)]

        profile_to = None
        if options.profile:
            mixed.out.mkdir(parents=True, exist_ok=True)
            profile_to = mixed.out / "profile-attack.txt"
        attacked, hotspots, (attacker_result,) = measure_level(
            stack, mixed, options.clients, level=1, profile_to=profile_to, companions=companions
        )
        attackers = _attacker_stats(attacker_result, options, document)
        attacked = _with_attackers_cpu(attacked, attackers.cpu_cores)
        log(level_line(attacked, "attack: under attack"))
        log(f"[attack] attackers: {attackers.outcomes}")
        peak = stack.peak_rss_mib()
    ratio = attacked.p99_ms / without.p99_ms if without.p99_ms else float("inf")
    settings = settings_of(mixed) | {
        "attackers": options.attackers,
        "probes": options.probes,
        "service_environment": options.environment,
        "client_addresses": f"10.{CLIENT_NETWORK}.0.0/16",
        "attacker_addresses": f"10.{ATTACKER_NETWORK}.0.0/16",
    }
    return AttackRunResult(
        machine=stack.machine,
        settings=settings,
        setup=setup_of(stack.seeded),
        probes=[stats for _, stats in probed],
        without=without,
        under_attack=attacked,
        attackers=attackers,
        p99_ratio=ratio,
        target_met=ratio <= ATTACK_P99_RATIO,
        service_peak_rss_mib=peak,
        total_seconds=time.perf_counter() - started,
        hotspots=hotspots,
        notes=stack.notes,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as ``argv`` asks; the exit status (1 when a legitimate request
    failed)."""
    from bench.attack_report import write_results

    options = _parse(argv)
    result = run(options)
    print(write_results(options.mixed.out, result), flush=True)
    failed = sum(result.without.errors.values()) + sum(result.under_attack.errors.values())
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
