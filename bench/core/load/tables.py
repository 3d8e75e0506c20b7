"""The tables of a report on levels of the mixed workload: throughput, latency, memory and CPU
a row per level; each kind's latency a column per level; and the failed requests."""

from __future__ import annotations

from collections.abc import Sequence

from bench.core.load.levels import LevelResult
from bench.core.load.loadgen import MIX

__all__ = ["CPU_COLUMNS", "errors_section", "kinds_table", "levels_table"]

_KIND_DOCS = {
    "leaderboard page": "`LeaderboardPage`, first 100, main board",
    "profile page": "`PlayerProfile`, ranks on 3 boards, best, last 10 sessions",
    "around me": "`AroundMe`, 5 above and 5 below, main board",
    "sessions": "`PlayerSessions`, last 10",
    "rank": "`PlayerRank`, main board",
    "submitScore": "`SubmitScore`, one play entering the 3 boards, fresh submissionId",
}
CPU_COLUMNS: tuple[tuple[str, str], ...] = (
    ("service", "service"),
    ("dynamodb_local", "DynamoDB Local"),
    ("redis", "Redis"),
    ("rank_indexer", "projector"),
    ("load_generator", "load gen"),
    ("other", "other"),
    ("machine", "machine"),
)


def _cell(level: LevelResult, kind: str) -> str:
    found = [k for k in level.kinds if k.kind == kind]
    if not found or not found[0].requests:
        return "-"
    k = found[0]
    return f"{k.p50_ms:.1f} / {k.p99_ms:.1f} ({k.requests})"


def _labels(levels: Sequence[LevelResult], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        return list(labels)
    return [f"{lv.clients} (profiled)" if lv.profiled else str(lv.clients) for lv in levels]


def levels_table(
    levels: Sequence[LevelResult],
    *,
    labels: Sequence[str] | None = None,
    cpu_columns: Sequence[tuple[str, str]] = CPU_COLUMNS,
) -> list[str]:
    """Throughput, latency, memory and CPU, a row per level (labelled by its clients, or by
    ``labels``)."""
    cpu_header = " / ".join(label for _, label in cpu_columns)
    rows = [
        f"| {'clients' if labels is None else 'run'} | req/s | p50 ms | p95 ms | p99 ms | errors"
        " | service RSS MiB (peak so far)"
        f" | CPU cores: {cpu_header} | service CPU ms / request | load avg start / end |",
        "|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|",
    ]
    for lv, label in zip(levels, _labels(levels, labels), strict=True):
        cpu = " / ".join(
            f"{lv.cpu_cores[key]:.2f}" if key in lv.cpu_cores else "-" for key, _ in cpu_columns
        )
        per_request = (
            f"{1000 * lv.cpu_cores['service'] / lv.throughput_rps:.1f}"
            if lv.throughput_rps
            else "-"
        )
        rows.append(
            f"| {label} | {lv.throughput_rps:.0f} | {lv.p50_ms:.1f} | {lv.p95_ms:.1f} |"
            f" {lv.p99_ms:.1f} | {sum(lv.errors.values())} | {lv.service_rss_mib:.0f}"
            f" ({lv.service_hwm_mib:.0f}) | {cpu} | {per_request} |"
            f" {lv.load_average[0]:.1f} / {lv.load_average[1]:.1f} |"
        )
    return rows


def kinds_table(levels: Sequence[LevelResult], *, labels: Sequence[str] | None = None) -> list[str]:
    """p50 / p99 of each kind of request, a column per level."""
    header = " | ".join(
        label if labels is not None else f"{label} clients" for label in _labels(levels, labels)
    )
    rows = [f"| kind | share | {header} |", "|---|--:|" + "--:|" * len(levels)]
    for kind, weight in MIX:
        cells = " | ".join(_cell(lv, kind) for lv in levels)
        rows.append(f"| {kind} ({_KIND_DOCS.get(kind, '')}) | {weight}% | {cells} |")
    return rows


def errors_section(
    levels: Sequence[LevelResult], *, labels: Sequence[str] | None = None
) -> list[str]:
    """The failed requests by level, kind and code, and the first failures."""
    named = dict(zip((id(lv) for lv in levels), _labels(levels, labels), strict=True))
    failed = [lv for lv in levels if lv.errors]
    if not failed:
        return [
            "No request failed (HTTP status, GraphQL errors, payload errors and the"
            " presence of every result were checked)."
        ]
    lines = [
        f"| {'clients' if labels is None else 'run'} | kind | code | requests |",
        "|--:|---|---|--:|",
    ]
    for lv in failed:
        for k in lv.kinds:
            for code, count in sorted(k.errors.items()):
                lines.append(f"| {named[id(lv)]} | {k.kind} | {code} | {count} |")
    lines += ["", "First failures:", ""]
    lines += [f"- `{sample}`" for lv in failed for sample in lv.error_samples]
    return lines
