"""What the access patterns benchmark prints and writes: the report's header, a table per
board size, the verdict against the targets, and ``access_patterns.json`` and
``access_patterns.md`` in the output folder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.access_patterns.measure import BoardResult
from bench.access_patterns.operations import (
    SHARDED_ID,
    SHARDED_PARTITIONS,
    TOP100_SHARDED_OPERATION,
)
from bench.core.report import (
    TOP100_OPERATION,
    TOP100_SHARDED_TARGET_RATIO,
    TOP100_TARGET_RATIO,
    machine_lines,
    run_document,
    save_results,
)

__all__ = [
    "board_markdown",
    "report_footer",
    "report_header",
    "targets_markdown",
    "write_results",
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
            " board (the profile page's three boards); every play also enters a write-sharded"
            f" board of {SHARDED_PARTITIONS} partitions ({SHARDED_ID}: the same players and"
            " scores as the main board), whose top 100 and leaderboard page are measured too"
            " (their raw calls: the board, one Query per partition sent at once and merged,"
            " the names)",
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


_TOP100_TARGETS = (
    (TOP100_OPERATION, "Top 100 with names", TOP100_TARGET_RATIO),
    (
        TOP100_SHARDED_OPERATION,
        f"Top 100 with names, {SHARDED_PARTITIONS} partitions",
        TOP100_SHARDED_TARGET_RATIO,
    ),
)
"""The operations judged against their raw calls: name, label, target ratio."""


def targets_markdown(boards: Sequence[BoardResult]) -> str:
    """The "Against the targets" section: the top 100 with names against its raw calls, on
    the main board and on the write-sharded board."""
    lines = ["## Against the targets", ""]
    for name, label, target in _TOP100_TARGETS:
        for board in boards:
            found = [r for r in board.operations if r.name == name]
            if not found:
                continue
            r = found[0]
            if not r.samples:
                lines.append(f"- {label} at {board.entries:,} entries: failed")
                continue
            verdict = "met" if r.ratio <= target else "NOT met"
            lines.append(
                f"- {label} at {board.entries:,} entries: {r.p50_ms:.1f} ms vs"
                f" {r.raw_p50_ms:.1f} ms raw ({r.raw_calls}), {r.ratio:.2f}x: {verdict}"
                f" (target: at most {target}x)"
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
    document = run_document(
        machine=machine,
        settings=settings,
        key="boards",
        parts=boards,
        total_seconds=total_seconds,
    )
    markdown = header + "\n" + "\n\n".join(board_markdown(b) for b in boards)
    targets = targets_markdown(boards)
    save_results(out, "access_patterns", document, f"{markdown}\n\n{targets}\n\n{footer}")
