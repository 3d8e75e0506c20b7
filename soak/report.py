"""The soak's result: one document with every number, printed and written as Markdown and
JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.core.measure import percentiles
from bench.core.report import log, machine_lines
from soak.client import Stats
from soak.invariants import Snapshot, Violation

__all__ = ["SoakResult", "markdown", "result_document", "write_results"]


@dataclass
class SoakResult:
    """Everything a run measured and found."""

    settings: dict[str, Any]
    machine: dict[str, Any]
    seconds: float
    stats: Stats
    submissions: dict[str, int]
    table: dict[str, int]
    dynamodb_calls: dict[str, int]
    moderation: dict[str, int] = field(default_factory=dict)
    """What the moderators did, by kind: removals (and removals that found no entry), bans,
    unbans, erasures completed and the erasure calls they took."""
    invariant_violations: list[Violation] = field(default_factory=list)
    ledger_violations: list[Violation] = field(default_factory=list)
    rank_index: dict[str, Any] | None = None
    """With the rank index: boards and entries verified, and every board whose index
    differs from the table (``differences``); None without it."""
    instances: list[dict[str, Any]] = field(default_factory=list)
    """Each instance: its URL, processes, and its response cache's hits and misses and its
    change feed's notices during the load (from its /metrics)."""
    staleness: dict[str, Any] | None = None
    """The staleness of subscribers and cached answers (see soak/staleness.py); None when
    not checked (no Redis)."""
    subscriptions: int = 0
    """Subscriptions the observers held."""

    @property
    def staleness_failures(self) -> list[str]:
        return list((self.staleness or {}).get("failure_list", []))

    @property
    def index_differences(self) -> list[str]:
        return list((self.rank_index or {}).get("differences", []))

    @property
    def passed(self) -> bool:
        return (
            not self.invariant_violations
            and not self.ledger_violations
            and not self.stats.unexpected_errors
            and not self.index_differences
            and not (self.staleness or {}).get("failures", 0)
        )


def table_counts(snap: Snapshot) -> dict[str, int]:
    """How many items of each kind the table holds."""
    return {
        "items": snap.items,
        "players": len(snap.players),
        "boards": len(snap.boards),
        "families": len(snap.families),
        "sessions": len(snap.sessions),
        "score items": sum(len(v) for v in snap.scores.values()),
        "entry guards": len(snap.guards),
        "submission records": len(snap.records),
    }


def _round(x: float) -> float:
    return round(x, 2)


def result_document(result: SoakResult) -> dict[str, Any]:
    """The JSON document of a run."""
    stats = result.stats
    p50, _, p99 = percentiles(stats.all_latencies())
    return {
        "passed": result.passed,
        "machine": result.machine,
        "settings": result.settings,
        "seconds": round(result.seconds, 1),
        "requests": stats.requests,
        "requests_per_second": _round(stats.requests / result.seconds) if result.seconds else 0,
        "p50_ms": _round(p50),
        "p99_ms": _round(p99),
        "operations": [
            {
                "name": name,
                "requests": len(op.latencies_ms),
                "p50_ms": _round(op_p50),
                "p99_ms": _round(op_p99),
                "errors": dict(op.errors),
            }
            for name, op in sorted(stats.ops.items())
            for op_p50, _, op_p99 in [percentiles(op.latencies_ms)]
        ],
        "expected_errors": dict(stats.expected_errors),
        "unexpected_errors": dict(stats.unexpected_errors),
        "reads_retried": dict(stats.retried),
        "unexpected_error_samples": stats.error_samples,
        "submissions": result.submissions,
        "moderation": result.moderation,
        "table": result.table,
        "dynamodb_calls": result.dynamodb_calls,
        "invariant_violations": [str(v) for v in result.invariant_violations],
        "ledger_violations": [str(v) for v in result.ledger_violations],
        "rank_index": result.rank_index,
        "instances": result.instances,
        "subscriptions": result.subscriptions,
        "staleness": result.staleness,
    }


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def _index(check: Mapping[str, Any] | None) -> str:
    if check is None:
        return "not run (no Redis)"
    differing = len(check["differences"])
    verdict = "every board equal" if not differing else f"{differing} boards differ"
    return f"{verdict}: {check['boards']} boards, {check['entries']:,} entries verified"


def _moderation(counts: Mapping[str, int]) -> str:
    removed, missed = counts.get("removals", 0), counts.get("removals of no entry", 0)
    return (
        f"{removed:,} entries removed ({missed:,} removals found no entry),"
        f" {counts.get('bans', 0):,} bans and {counts.get('unbans', 0):,} unbans of hot players,"
        f" {counts.get('erasures', 0):,} players erased"
        f" ({counts.get('erasure calls', 0):,} calls)"
    )


def _bound(result: SoakResult) -> str:
    return f"{result.staleness['bound_seconds']:g} s" if result.staleness else "none"


def _failures(result: SoakResult) -> str:
    return str(result.staleness["failures"]) if result.staleness else "not checked"


def _listed(title: str, violations: list[Violation], limit: int = 50) -> list[str]:
    if not violations:
        return []
    lines = ["", f"### {title} ({len(violations)})", ""]
    lines += [f"- {v}" for v in violations[:limit]]
    if len(violations) > limit:
        lines.append(f"- ... and {len(violations) - limit} more")
    return lines


def _served(result: SoakResult) -> str:
    settings = result.settings
    if settings.get("fleet"):
        return (
            f" round-robin over {settings['instances']} instances of `leaderboard serve"
            f" --workers {settings['workers']}` (processes of their own, each beside a"
            " `leaderboard rank-indexer`; one Redis for the rank index, the change feed and the"
            " response caches) on one table"
        )
    return (
        f" round-robin over {settings['instances']} service instances on one table"
        " (in this process)"
    )


def _instance_lines(result: SoakResult) -> list[str]:
    if not result.instances:
        return []
    lines = [
        "",
        "| instance | processes | cache hits | cache misses | hit ratio"
        " | feed notices (all workers) | feed resyncs | feed delay from attainedAt, p50 / p99 |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for i in result.instances:
        processes = (
            f"master {i['pid']}, workers {', '.join(str(w) for w in i['workers'])}"
            if i.get("pid")
            else "in this process"
        )
        lines.append(
            f"| {i['name']} | {processes} | {i['cache_hits']:,} | {i['cache_misses']:,} |"
            f" {100 * i['cache_hit_ratio']:.1f}% | {i['change_feed_notices']:,} |"
            f" {i['change_feed_resyncs']:,} | {_at_most(i['change_feed_delay_p50_at_most_s'])} /"
            f" {_at_most(i['change_feed_delay_p99_at_most_s'])} |"
        )
    return lines


def _at_most(seconds: float | str | None) -> str:
    """A histogram's bucket bound as the report shows it."""
    if seconds is None:
        return "none"
    if isinstance(seconds, str):
        return "> 10 s"
    return f"≤ {seconds * 1000:.0f} ms"


def _staleness_lines(result: SoakResult) -> list[str]:
    found = result.staleness
    if found is None:
        return ["", "## Staleness", "", "Not checked (no Redis: no change feed, no cache)."]
    lines = [
        "",
        "## Staleness",
        "",
        f"{found['probes']:,} probe entries (one acknowledged play at a time by dedicated"
        f" players, each the new best of its board), watched by {result.subscriptions}"
        " subscriptions over WebSocket and by readers of the cached top page on every"
        f" instance. Bound: **{found['bound_seconds']:g} s** from a play's acknowledgement;"
        f" **{found['failures']} failures**. Staleness of a probe at a subscriber: from its"
        " acknowledgement to the first push showing it; at a reader: how long after it a read"
        " still began that missed it.",
        "",
        "| watched by | instance | observers | answers | probes shown | staleness p50 ms"
        " | p99 ms | max ms |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for row in found["by_instance"]:
        lines.append(
            f"| {row['kind']} | {row['instance']} | {row['observers']} |"
            f" {row['observations']:,} | {row['reflections']:,} | {row['p50_ms']:.0f} |"
            f" {row['p99_ms']:.0f} | {row['max_ms']:.0f} |"
        )
    if found["failure_list"]:
        lines += ["", f"### Staleness failures ({found['failures']})", ""]
        lines += [f"- {f}" for f in found["failure_list"]]
    return lines


def markdown(result: SoakResult) -> str:
    """The printed report: a summary table, the operations, and every violation."""
    doc = result_document(result)
    settings, subs = result.settings, result.submissions
    lines = [
        "# Load soak",
        "",
        *machine_lines(result.machine),
        *(
            [
                f"- Redis {result.machine['redis']} in memory (the rank index, the change feed"
                " and the response caches), on the same machine"
            ]
            if "redis" in result.machine
            else []
        ),
        f"- 1-minute load average at start and end: {result.machine['load_average'][0]} and"
        f" {result.machine['load_average'][1]} (whatever else runs on the machine counts too)",
        f"- {settings['clients']} concurrent clients for {doc['seconds']} s over HTTP/GraphQL,"
        f"{_served(result)},"
        f" about {round(100 * settings['write_share'])}% submissions, {settings['players']}"
        f" players of which {settings['hot_players']} hot (take"
        f" {round(100 * settings['hot_share'])}% of the submissions), seed {settings['seed']}",
        "",
        f"**Result: {'PASSED' if result.passed else 'FAILED'}**",
        "",
        "| | |",
        "|---|--:|",
        f"| requests | {doc['requests']:,} |",
        f"| requests/s | {doc['requests_per_second']:.1f} |",
        f"| p50 / p99 latency | {doc['p50_ms']:.1f} ms / {doc['p99_ms']:.1f} ms |",
        f"| submissions acknowledged | {subs['acknowledged']:,}"
        f" ({subs['duplicates']:,} as duplicates) |",
        f"| sessions recorded | {result.table['sessions']:,} |",
        f"| submissions racing another of the same player | {subs['overlapping']:,}"
        f" (up to {subs['max_in_flight']} at once) |",
        f"| transaction attempts / recorded plays | {subs['transactions']:,} /"
        f" {result.table['sessions']:,} |",
        f"| moderation (admin key) | {_moderation(result.moderation)} |",
        f"| refused as provoked | {_counts(result.stats.expected_errors)} |",
        f"| unexpected errors | {_counts(result.stats.unexpected_errors)} |",
        f"| reads sent again after a refusal to retry | {_counts(result.stats.retried)} |",
        f"| submissions with unknown outcome | {subs['unknown']:,} |",
        f"| invariant violations (table) | {len(result.invariant_violations)} |",
        f"| broken promises to clients | {len(result.ledger_violations)} |",
        f"| rank index = table (Redis) | {_index(result.rank_index)} |",
        f"| table items scanned | {result.table['items']:,} |",
        f"| staleness failures (bound {_bound(result)}) | {_failures(result)} |",
        *_instance_lines(result),
        "",
        "| operation | requests | p50 ms | p99 ms | errors |",
        "|---|--:|--:|--:|---|",
    ]
    for op in doc["operations"]:
        lines.append(
            f"| {op['name']} | {op['requests']:,} | {op['p50_ms']:.1f} | {op['p99_ms']:.1f} |"
            f" {_counts(op['errors'])} |"
        )
    lines += _staleness_lines(result)
    if result.stats.error_samples:
        lines += ["", "### Unexpected errors (first ones)", ""]
        lines += [f"- `{s}`" for s in result.stats.error_samples]
    lines += _listed("Invariant violations", result.invariant_violations)
    lines += _listed("Broken promises to clients", result.ledger_violations)
    if result.index_differences:
        lines += ["", "### Rank index differences", ""]
        lines += [f"- {d}" for d in result.index_differences]
    return "\n".join(lines) + "\n"


def write_results(out: Path, result: SoakResult) -> None:
    """Write ``soak.json`` and ``soak.md`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps(result_document(result), indent=2) + "\n")
    (out / "soak.md").write_text(markdown(result))
    log(f"wrote {out / 'soak.json'} and {out / 'soak.md'}")
