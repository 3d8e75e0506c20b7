"""What a fleet run writes: ``fleet.json`` (every number) and ``fleet.md`` (the tables and the
verdict against the targets)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.core.load.levels import LevelResult
from bench.core.load.loadgen import MIX
from bench.core.report import (
    TARGET_CLIENTS,
    TARGET_P99_MS,
    TARGET_RPS,
    TOP100_TARGET_RATIO,
    machine_lines,
    save_results,
)
from bench.fleet.results import FleetResult, Measured

__all__ = [
    "CACHED_TOP100_P50_MS",
    "SERVICE_CPU_MS",
    "fleet_markdown",
    "single_ratio",
    "targets",
    "write_results",
]

SERVICE_CPU_MS = 4.0
"""Target: the service's CPU time per request of the mix at most this (ms)."""
CACHED_TOP100_P50_MS = 2.0
"""Target: the top-100 page answered from the response cache at a p50 of at most this (ms)."""

_PROCESSES = (
    ("dynamodb_local", "DynamoDB Local"),
    ("redis", "Redis"),
    ("rank_indexer", "projector"),
    ("load_generator", "load gen"),
    ("other", "other"),
)


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _ms(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _rows(result: FleetResult) -> Iterator[tuple[Measured, LevelResult]]:
    for measured in result.measured:
        for level in measured.levels:
            yield measured, level


def levels_table(result: FleetResult) -> list[str]:
    """Throughput, latency, service CPU per request, cache hit ratio and every process's CPU
    for each configuration and number of clients."""
    head = "| configuration | clients | req/s | p50 ms | p99 ms | errors | service CPU ms/req |"
    head += " cache hits | service cores | " + " | ".join(n for _, n in _PROCESSES)
    head += " | load avg start / end |"
    lines = [head, "|" + "---|" * (10 + len(_PROCESSES))]
    for measured, level in _rows(result):
        cores = level.cpu_cores
        service = cores.get("service")
        lines.append(
            f"| {measured.name} | {level.clients} | {level.throughput_rps:.0f}"
            f" | {level.p50_ms:.1f} | {level.p99_ms:.1f} | {sum(level.errors.values())}"
            f" | {_ms(level.service_cpu_ms_per_request, 2)} | {_ratio(level.cache_hit_ratio)}"
            f" | {_ms(service, 2)} | "
            + " | ".join(_ms(cores.get(key), 2) for key, _ in _PROCESSES)
            + f" | {level.load_average[0]:.1f} / {level.load_average[1]:.1f} |"
        )
    return lines


def kinds_table(result: FleetResult) -> list[str]:
    """p50 / p99 of every kind, for each configuration and number of clients."""
    names = [name for name, _ in MIX]
    lines = [
        "| configuration | clients | " + " | ".join(names) + " |",
        "|" + "---|" * (2 + len(names)),
    ]
    for measured, level in _rows(result):
        by_kind = {k.kind: k for k in level.kinds}
        cells = [
            f"{by_kind[n].p50_ms:.1f} / {by_kind[n].p99_ms:.1f}"
            if n in by_kind and by_kind[n].requests
            else "-"
            for n in names
        ]
        lines.append(f"| {measured.name} | {level.clients} | " + " | ".join(cells) + " |")
    return lines


def _raw_single(result: FleetResult) -> LevelResult | None:
    return next((m.single for m in result.measured if m.workers == 0), None)


def single_ratio(level: LevelResult, raw: LevelResult | None) -> float | None:
    """A single-kind run's p50 over the raw calls' p50; None without a raw p50."""
    if raw is None or raw.p50_ms <= 0:
        return None
    return level.p50_ms / raw.p50_ms


def single_table(result: FleetResult) -> list[str]:
    """The top-100 page alone at one client: raw calls, and the service cache off and on."""
    raw = _raw_single(result)
    lines = [
        "| configuration | requests | p50 ms | p99 ms | p50 / raw p50 | p99 / raw p99 |",
        "|---|---|---|---|---|---|",
    ]
    for measured in result.measured:
        level = measured.single
        if level is None:
            continue
        p99 = level.p99_ms / raw.p99_ms if raw is not None and raw.p99_ms > 0 else None
        ratio = single_ratio(level, raw)
        lines.append(
            f"| {measured.name} | {level.requests} | {level.p50_ms:.2f} | {level.p99_ms:.2f}"
            f" | {_ms(ratio, 2)}x | {_ms(p99, 2)}x |"
        )
    return lines


def _at_target(measured: Measured) -> LevelResult | None:
    return next((lv for lv in measured.levels if lv.clients == TARGET_CLIENTS), None)


def _throughput_lines(result: FleetResult) -> list[str]:
    lines = []
    for measured in result.measured:
        level = _at_target(measured)
        if measured.workers == 0 or level is None:
            continue
        lines.append(
            f"- {measured.name}, {TARGET_CLIENTS} clients: {level.throughput_rps:.0f} req/s:"
            f" {_verdict(level.throughput_rps >= TARGET_RPS)} (target: at least"
            f" {TARGET_RPS:.0f}); p99 {level.p99_ms:.0f} ms:"
            f" {_verdict(level.p99_ms <= TARGET_P99_MS)} (target: at most {TARGET_P99_MS:.0f} ms)"
        )
    if not lines:
        lines.append(f"- Mixed workload at {TARGET_CLIENTS} clients: not measured in this run")
    return lines


def _cpu_lines(result: FleetResult) -> list[str]:
    lines = []
    for measured in result.measured:
        level = _at_target(measured) or (measured.levels[-1] if measured.levels else None)
        cpu = level.service_cpu_ms_per_request if level is not None else None
        if measured.workers == 0 or level is None or cpu is None:
            continue
        lines.append(
            f"- Service CPU per request of the mix, {measured.name}, {level.clients} clients:"
            f" {cpu:.2f} ms: {_verdict(cpu <= SERVICE_CPU_MS)} (target: at most"
            f" {SERVICE_CPU_MS:g} ms)"
        )
    return lines


def _single_lines(result: FleetResult) -> list[str]:
    raw = _raw_single(result)
    by_cache = {m.cache: m.single for m in result.measured if m.workers == 1}
    lines = []
    cached = by_cache.get(True)
    if cached is not None:
        lines.append(
            f"- Top-100 page from the cache (1 worker, 1 client): p50 {cached.p50_ms:.2f} ms:"
            f" {_verdict(cached.p50_ms <= CACHED_TOP100_P50_MS)} (target: at most"
            f" {CACHED_TOP100_P50_MS:g} ms)"
        )
    uncached = by_cache.get(False)
    ratio = single_ratio(uncached, raw) if uncached is not None else None
    if uncached is not None and raw is not None and ratio is not None:
        lines.append(
            f"- Top-100 page with names, not cached (1 worker, 1 client): p50"
            f" {uncached.p50_ms:.2f} ms vs {raw.p50_ms:.2f} ms for the raw calls, {ratio:.2f}x:"
            f" {_verdict(ratio <= TOP100_TARGET_RATIO)} (target: at most"
            f" {TOP100_TARGET_RATIO}x)"
        )
    return lines or ["- Top-100 page alone: not measured in this run"]


def targets(result: FleetResult) -> list[str]:
    """The "Against the targets" bullet points."""
    failed = sum(
        sum(level.errors.values())
        for measured in result.measured
        for level in [*measured.levels, *([measured.single] if measured.single else [])]
    )
    return [
        *_throughput_lines(result),
        *_cpu_lines(result),
        *_single_lines(result),
        f"- Failed requests (and raw calls) over every run: {failed}: {_verdict(failed == 0)}"
        " (target: none)",
    ]


def _setup_lines(result: FleetResult) -> list[str]:
    s, setup = result.settings, result.setup
    boards = ", ".join(f"{board} {count:,}" for board, count in setup["boards"].items())
    return [
        *machine_lines(result.machine),
        f"- Redis {result.machine.get('redis_server', '?')} (rank index, in memory), fed by"
        " `leaderboard rank-indexer` in its own process; DynamoDB Local, Redis, the projector,"
        " the service and the load generator share the same cores",
        f"- Data: {boards} players ({setup['items']:,} items), loaded once: every"
        " configuration runs on the same table (the submissions of each add to it)",
        f"- Clients: closed loop, in {s['generators']} load-generator process(es); before each"
        f" configuration {s['prewarm_seconds']:g} s of unrecorded load at"
        f" {s['prewarm_clients']} clients; each level {s['warmup_seconds']:g} s of warm-up,"
        f" then {s['duration_seconds']:g} s measured. The same level draws the same kinds,"
        " players and scores in every configuration",
        "- Mix: " + ", ".join(f"{kind} {weight}%" for kind, weight in MIX),
        "- Raw calls: each request sent by the same clients as the aioboto3 calls (and"
        " rank-index reads) the service makes for it, in the same rounds, on one DynamoDB and"
        " one Redis client per load-generator process (`bench/core/load/floor.py`); a"
        " submission through the table layer's own `record_play` (BatchGetItem,"
        " TransactWriteItems), then its ranks from the index",
        f"- Service: `leaderboard serve` restarted for each configuration; {s['workers']}"
        " workers in the multi-process ones (`--workers`; metrics pooled over the workers);"
        " cache off is `LEADERBOARD_CACHE_MB=0`, on is the default (64 MB)",
    ]


def _load_notes(result: FleetResult) -> list[str]:
    """The range of the machine's load average over the levels (other work shares it)."""
    loads = [x for _, level in _rows(result) for x in level.load_average]
    if not loads:
        return []
    return [
        f"The machine's 1-minute load average ranged from {min(loads):.1f} to {max(loads):.1f}"
        f" over the levels ({result.machine.get('cpu_count', '?')} cores): every number here"
        " is of a machine shared with that load."
    ]


def fleet_markdown(result: FleetResult) -> str:
    """The whole report."""
    s = result.settings
    lines = [
        "# The mixed workload against its floor: raw calls, workers, response cache",
        "",
        *_setup_lines(result),
        "",
        "## Throughput and latency",
        "",
        *levels_table(result),
        "",
        "Service CPU ms/req: the CPU time of every process of the service (master and"
        " workers) over the requests completed in the window. Cache hits: hits over cacheable"
        " lookups in the window, from `/metrics` before and after it. The process columns are"
        " CPU cores (CPU seconds per second of window; the machine has"
        f" {result.machine.get('cpu_count', '?')}); *other* is the machine's busy time none of"
        " the benchmark's processes account for (other work on the machine). Load avg: the"
        " machine's 1-minute load average at the start and at the end of the level. For the"
        " raw calls, *load gen* includes the aioboto3 and Redis clients' own CPU (the part of"
        " the floor a service would spend too).",
        "",
        "## Latency by kind: p50 / p99 ms (successful requests in the window; - for none)",
        "",
        *kinds_table(result),
        "",
        f"## The top-100 page with names alone, at one client ({s['single_duration_seconds']:g} s)",
        "",
        *single_table(result),
        "",
        "## Against the targets",
        "",
        *targets(result),
        "",
        "![Throughput and p99 per configuration](fleet.png)",
        "",
    ]
    notes = [*_load_notes(result), *result.notes]
    lines += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    lines.append(f"Total run time: {result.total_seconds:.1f} s.")
    return "\n".join(lines) + "\n"


def _document(result: FleetResult) -> dict[str, Any]:
    document = asdict(result)
    for measured, raw in zip(result.measured, document["measured"], strict=True):
        for level, out in zip(measured.levels, raw["levels"], strict=True):
            out["service_cpu_ms_per_request"] = level.service_cpu_ms_per_request
            out["cache_hit_ratio"] = level.cache_hit_ratio
    return document


def write_results(out: Path, result: FleetResult) -> str:
    """Write ``fleet.json`` and ``fleet.md`` into ``out``; the Markdown."""
    markdown = fleet_markdown(result)
    save_results(out, "fleet", _document(result), markdown)
    return markdown
