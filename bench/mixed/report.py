"""What the mixed-workload benchmark writes: ``mixed.json`` (every number) and ``mixed.md`` (the
tables, the verdict against the targets, and the hot spots when the service was profiled)."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.core.load.hotspots import hotspots_markdown
from bench.core.load.loadgen import MIX
from bench.core.load.tables import errors_section, kinds_table, levels_table
from bench.core.report import (
    RSS_TARGET_MB,
    TARGET_CLIENTS,
    TARGET_P99_MS,
    TARGET_RPS,
    TOP100_OPERATION,
    TOP100_TARGET_RATIO,
    machine_lines,
    save_results,
)
from bench.mixed.results import MixedResult

__all__ = ["mixed_markdown", "targets", "write_results"]


def _mb(mib: float) -> float:
    return mib * 1024 * 1024 / 1e6


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _top100_lines(out: Path) -> list[str]:
    path = out / "access_patterns.json"
    if not path.is_file():
        return [
            f"- Top 100 with names at most {TOP100_TARGET_RATIO}x its raw calls: not measured"
            " here (run `python -m bench.access_patterns`)"
        ]
    document: Any = json.loads(path.read_text())
    written = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines: list[str] = []
    for board in document.get("boards", []):
        for op in board.get("operations", []):
            if op["name"] != TOP100_OPERATION:
                continue
            ratio = float(op["ratio"])
            lines.append(
                f"- Top 100 with names at {board['entries']:,} entries:"
                f" {op['p50_ms']:.1f} ms vs {op['raw_p50_ms']:.1f} ms raw ({op['raw_calls']}),"
                f" {ratio:.2f}x: {_verdict(ratio <= TOP100_TARGET_RATIO)}"
                f" (target: at most {TOP100_TARGET_RATIO}x; access_patterns.json of {written})"
            )
    return lines


def targets(result: MixedResult, out: Path) -> list[str]:
    """The "Against the targets" bullet points."""
    lines = _top100_lines(out)
    measured = [lv for lv in result.levels if not lv.profiled]
    at = [lv for lv in measured if lv.clients == TARGET_CLIENTS]
    if at:
        level = at[0]
        lines.append(
            f"- Mixed workload at {TARGET_CLIENTS} clients: {level.throughput_rps:.0f} req/s:"
            f" {_verdict(level.throughput_rps >= TARGET_RPS)} (target: at least"
            f" {TARGET_RPS:.0f}); p99 {level.p99_ms:.0f} ms:"
            f" {_verdict(level.p99_ms <= TARGET_P99_MS)} (target: at most {TARGET_P99_MS:.0f} ms)"
        )
    else:
        lines.append(f"- Mixed workload at {TARGET_CLIENTS} clients: not measured in this run")
    peak_mb = _mb(result.service_peak_rss_mib)
    lines.append(
        f"- Service peak RSS (VmHWM over the whole run, loading and every level):"
        f" {peak_mb:.0f} MB ({result.service_peak_rss_mib:.0f} MiB):"
        f" {_verdict(peak_mb <= RSS_TARGET_MB)} (target: at most {RSS_TARGET_MB:.0f} MB)"
    )
    failed = sum(sum(lv.errors.values()) for lv in result.levels)
    lines.append(
        f"- Failed requests over every level: {failed}: {_verdict(failed == 0)} (target: none)"
    )
    return lines


def mixed_markdown(result: MixedResult, out: Path) -> str:
    """The whole report."""
    s, setup, machine = result.settings, result.setup, result.machine
    boards = setup["boards"]
    board_text = ", ".join(f"{board} {count:,}" for board, count in boards.items())
    ranks = (
        "ranks from the Redis rank index (redis-server"
        f" {machine.get('redis_server', '?')}, in memory), fed by `leaderboard rank-indexer`"
        " in its own process"
        if s["ranks"] == "index"
        else "ranks from COUNT queries (no rank index)"
    )
    setup_text = f"BatchWriteItem in {setup['load_seconds']:.1f} s" + (
        f", index rebuilt in {setup['index_seconds']:.1f} s and in sync after"
        f" {setup['sync_seconds']:.1f} s"
        if s["ranks"] == "index"
        else ""
    )
    lines = [
        "# Mixed workload: throughput and latency under concurrent clients",
        "",
        *machine_lines(machine),
        "- Service: `leaderboard serve` in its own process (one Python process, one event"
        f" loop; JSON access log to a file), {ranks}. DynamoDB Local, Redis, the projector and"
        " the load generator share the same cores: the CPU columns show who used them",
        f"- Data: {board_text} players ({setup['items']:,} items; {setup_text})",
        f"- Clients: closed loop (each sends its next request as soon as the previous one is"
        f" answered), in {s['generators']} load-generator process(es) of aiohttp with"
        f" keep-alive connections; after {s.get('prewarm_seconds', 0):g} s of unrecorded load"
        f" at {s.get('prewarm_clients', '?')} clients, each level {s['warmup_seconds']:g} s of"
        " warm-up, then"
        f" {s['duration_seconds']:g} s measured. req/s counts the requests completed in the"
        " measured window",
        "- Mix: "
        + ", ".join(f"{kind} {weight}%" for kind, weight in MIX)
        + ": the frontend's documents from `examples/operations/` where there is one",
        "",
        "## Throughput and latency",
        "",
        *levels_table(result.levels),
        "",
        "CPU cores: CPU seconds per second of the measured window (1.00 = one core busy; the"
        " machine has "
        f"{machine.get('cpu_count', '?')}). *other* is the machine's busy time that none of"
        " the benchmark's processes account for (other work on the machine). RSS: the"
        " largest VmRSS sampled during the window, and VmHWM (the peak since start). Service"
        " CPU ms / request: the service's CPU time over the requests it answered.",
        "",
        "## Latency by kind: p50 / p99 ms (successful requests in the window)",
        "",
        *kinds_table(result.levels),
        "",
        "## Errors",
        "",
        *errors_section(result.levels),
        "",
        "## Against the targets",
        "",
        *targets(result, out),
        "",
        "![Throughput and latency against concurrent clients](mixed.png)",
        "",
    ]
    if result.notes:
        lines += ["## Notes", "", *[f"- {note}" for note in result.notes], ""]
    if result.hotspots is not None:
        profiled = [lv for lv in result.levels if lv.profiled]
        clients = profiled[0].clients if profiled else "?"
        lines += [
            hotspots_markdown(
                result.hotspots, title=f"## Where the service's CPU goes at {clients} clients"
            ),
            "",
        ]
    lines.append(f"Total run time: {result.total_seconds:.1f} s.")
    return "\n".join(lines) + "\n"


def write_results(out: Path, result: MixedResult) -> str:
    """Write ``mixed.json`` and ``mixed.md`` into ``out``; the Markdown."""
    markdown = mixed_markdown(result, out)
    save_results(out, "mixed", asdict(result), markdown)
    return markdown
