"""What the benchmark prints and writes: progress on stderr, Markdown tables on stdout, and
``access_patterns.json`` and ``access_patterns.md`` in the output folder."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.measure import BoardResult
from bench.stack import dynamodb_local_version
from leaderboard.embedded_dynamodb import DYNAMODB_LOCAL, EmbeddedDynamoDB

__all__ = [
    "ATTACK_P99_RATIO",
    "RSS_TARGET_MB",
    "TARGET_CLIENTS",
    "TARGET_P99_MS",
    "TARGET_RPS",
    "TOP100_OPERATION",
    "TOP100_TARGET_RATIO",
    "board_markdown",
    "log",
    "machine_info",
    "machine_lines",
    "report_footer",
    "report_header",
    "save_results",
    "targets_markdown",
    "write_results",
]

TOP100_OPERATION = "top 100 with player names"
TOP100_TARGET_RATIO = 1.3
"""Target: the top 100 with names at most this many times the raw calls' p50, same run."""
TARGET_CLIENTS = 32
TARGET_RPS = 300.0
"""Target: the mixed workload at TARGET_CLIENTS clients at least this many requests/s ..."""
TARGET_P99_MS = 250.0
"""... with a p99 latency at most this."""
RSS_TARGET_MB = 250.0
"""Target: the service's peak resident memory at most this many MB (10^6 bytes)."""
ATTACK_P99_RATIO = 2.0
"""Target: under attack, the legitimate clients' p99 at most this many times their p99
without attackers, same run."""


def log(message: str) -> None:
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def save_results(out: Path, name: str, document: Any, markdown: str) -> None:
    """Write ``<name>.json`` (every number) and ``<name>.md`` (the printed report) into
    ``out``, creating it if needed."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(document, indent=2) + "\n")
    (out / f"{name}.md").write_text(markdown.rstrip("\n") + "\n")
    log(f"wrote {out / name}.json and {out / name}.md")


def machine_info(local: EmbeddedDynamoDB) -> dict[str, Any]:
    """The machine, Python and DynamoDB Local the benchmark runs on."""
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "dynamodb_local": dynamodb_local_version(local),
        "dynamodb_local_package": f"{DYNAMODB_LOCAL.name}@{DYNAMODB_LOCAL.version}",
    }


def machine_lines(machine: Mapping[str, Any]) -> list[str]:
    """The Markdown bullet points describing ``machine``."""
    return [
        f"- Machine: {machine['cpu_count']} cores ({machine['platform']})",
        f"- Python {machine['python']} ({machine['implementation']})",
        f"- DynamoDB Local {machine['dynamodb_local']} in memory"
        f" (npm {machine['dynamodb_local_package']}), on the same machine",
    ]


def report_header(
    machine: Mapping[str, Any],
    *,
    requests: int,
    warmup: int,
    budget_seconds: float | None = None,
) -> str:
    """The title and set-up of the report, ending in an empty line."""
    budget = (
        f" (an operation too slow for that is measured for {budget_seconds:g} s, at least 10"
        " requests; n says how many)"
        if budget_seconds
        else ""
    )
    return "\n".join(
        [
            "# Access patterns: GraphQL over HTTP vs. raw DynamoDB calls",
            "",
            *machine_lines(machine),
            "- Each board size on its own fresh DynamoDB Local; the main board holds that many"
            " players, a quarter of them also play on a season board and a twentieth on a daily"
            " board (the profile page's three boards)",
            f"- {requests} measured requests per operation after {warmup} warm-up{budget};"
            " service and raw calls alternate on the same variables and the same aioboto3"
            " client; ratio = service p50 / raw p50",
            "",
        ]
    )


def board_markdown(board: BoardResult) -> str:
    """The section of one board size: how it was loaded and a table of its operations."""
    others = ", ".join(
        f"{board_id} {count:,}" for board_id, count in list(board.board_entries.items())[1:]
    )
    rows = [
        f"### {board.entries:,} entries",
        "",
        f"Loaded with {board.load_method} in {board.load_seconds:.1f} s"
        + (f" (other boards: {others})" if others else "")
        + f"; measured in {board.measure_seconds:.1f} s.",
        "",
        "| operation | n | p50 ms | p95 ms | p99 ms | raw p50 ms | ratio | DynamoDB calls |",
        "|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    notes: list[str] = []
    for r in board.operations:
        failed = sum(r.failures.values())
        n = f"{r.samples} ({failed} failed)" if failed else str(r.samples)
        if not r.samples:
            rows.append(f"| {r.name} | {n} | - | - | - | - | - | {r.calls} |")
        else:
            rows.append(
                f"| {r.name} | {n} | {r.p50_ms:.2f} | {r.p95_ms:.2f} | {r.p99_ms:.2f} |"
                f" {r.raw_p50_ms:.2f} | {r.ratio:.2f} | {r.calls} |"
            )
        if failed:
            codes = ", ".join(
                f"{code} \N{MULTIPLICATION SIGN}{k}" for code, k in r.failures.items()
            )
            notes.append(f"- {r.name}: {failed} request(s) failed ({codes}).")
    if notes:
        rows += ["", *notes]
    return "\n".join(rows)


def targets_markdown(boards: Sequence[BoardResult]) -> str:
    """The "Against the targets" section: the top 100 with names against its raw calls."""
    lines = ["## Against the targets", ""]
    for board in boards:
        found = [r for r in board.operations if r.name == TOP100_OPERATION]
        if not found:
            continue
        r = found[0]
        if not r.samples:
            lines.append(f"- Top 100 with names at {board.entries:,} entries: failed")
            continue
        verdict = "met" if r.ratio <= TOP100_TARGET_RATIO else "NOT met"
        lines.append(
            f"- Top 100 with names at {board.entries:,} entries: {r.p50_ms:.1f} ms vs"
            f" {r.raw_p50_ms:.1f} ms raw ({r.raw_calls}), {r.ratio:.2f}x: {verdict}"
            f" (target: at most {TOP100_TARGET_RATIO}x)"
        )
    return "\n".join(lines)


def report_footer(total_seconds: float) -> str:
    """The closing line with the run time of the whole benchmark."""
    return f"Total run time: {total_seconds:.1f} s."


def write_results(
    out: Path,
    *,
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    boards: Sequence[BoardResult],
    total_seconds: float,
    header: str,
    footer: str,
) -> None:
    """Write ``access_patterns.json`` (every number) and ``access_patterns.md`` (the printed
    report) into ``out``, creating it if needed."""
    document = {
        "machine": machine,
        "settings": settings,
        "boards": [asdict(b) for b in boards],
        "total_seconds": round(total_seconds, 1),
    }
    markdown = header + "\n" + "\n\n".join(board_markdown(b) for b in boards)
    targets = targets_markdown(boards)
    save_results(out, "access_patterns", document, f"{markdown}\n\n{targets}\n\n{footer}")
