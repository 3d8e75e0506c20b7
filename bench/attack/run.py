"""Running the under-attack benchmark: the mixed workload's stack with the service trusting one
proxy's X-Forwarded-For, the attack documents probed, then the legitimate clients alone and
beside the attackers."""

from __future__ import annotations

import statistics
import time
from concurrent.futures import Future
from dataclasses import dataclass, fields, replace
from typing import Any

from bench.attack.attackers import AttackerResult, AttackPlan, ProbeResult, probe, run_attackers
from bench.attack.documents import AttackDocument, attack_documents
from bench.attack.results import AttackerStats, AttackRunResult, ProbeStats
from bench.core.load.levels import LevelResult, level_line, measure_level
from bench.core.load.options import Options, settings_of
from bench.core.load.seeding import setup_of
from bench.core.load.stack import Stack, running_stack
from bench.core.measure import percentiles
from bench.core.report import ATTACK_P99_RATIO, log
from leaderboard.config import Limits

__all__ = [
    "ATTACKER_NETWORK",
    "CLIENT_NETWORK",
    "LIMIT_NAMES",
    "PROBE_NETWORK",
    "SERVICE_ENVIRONMENT",
    "AttackOptions",
    "run",
]

CLIENT_NETWORK = 1
"""Legitimate clients claim addresses in 10.1.0.0/16 ..."""
ATTACKER_NETWORK = 66
"""... attackers in 10.66.0.0/16 ..."""
PROBE_NETWORK = 200
"""... and the probes of each document in 10.<200 + its number>.0.0/16."""
SERVICE_ENVIRONMENT = {"LEADERBOARD_LIMIT_TRUSTED_PROXY_HOPS": "1"}
LIMIT_NAMES = {spec.name.upper() for spec in fields(Limits)}


@dataclass(frozen=True)
class AttackOptions:
    clients: int
    attackers: int
    probes: int
    profile: bool
    environment: dict[str, str]
    """The service's environment beyond :func:`bench.core.processes.service_env`'s."""
    mixed: Options
    """The stack's and the legitimate clients' options."""


def _probe_all(stack: Stack, times: int) -> list[tuple[AttackDocument, ProbeStats]]:
    probed: list[tuple[AttackDocument, ProbeStats]] = []
    for number, document in enumerate(attack_documents()):
        result: ProbeResult = probe(
            stack.serving.url,
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
                url=stack.serving.url,
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
