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
from leaderboard.embedded import DYNAMODB_LOCAL, DynamoDBLocal

__all__ = [
    "board_markdown",
    "log",
    "machine_info",
    "machine_lines",
    "report_footer",
    "report_header",
    "write_results",
]


def log(message: str) -> None:
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def machine_info(local: DynamoDBLocal) -> dict[str, Any]:
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


def report_header(machine: Mapping[str, Any], *, requests: int, warmup: int) -> str:
    """The title and set-up of the report, ending in an empty line."""
    return "\n".join(
        [
            "# Access patterns: GraphQL over HTTP vs. raw DynamoDB calls",
            "",
            *machine_lines(machine),
            f"- {requests} measured requests per operation after {warmup} warm-up;"
            " service and raw calls alternate on the same variables and the same aioboto3"
            " client; ratio = service p50 / raw p50",
            "",
        ]
    )


def board_markdown(board: BoardResult) -> str:
    """The section of one board size: how it was loaded and a table of its operations."""
    rows = [
        f"### {board.entries:,} entries",
        "",
        f"Loaded with {board.load_method} in {board.load_seconds:.1f} s;"
        f" measured in {board.measure_seconds:.1f} s.",
        "",
        "| operation | p50 ms | p95 ms | p99 ms | raw p50 ms | ratio | DynamoDB calls |",
        "|---|--:|--:|--:|--:|--:|---|",
    ]
    for r in board.operations:
        rows.append(
            f"| {r.name} | {r.p50_ms:.2f} | {r.p95_ms:.2f} | {r.p99_ms:.2f} |"
            f" {r.raw_p50_ms:.2f} | {r.ratio:.2f} | {r.calls} |"
        )
    return "\n".join(rows)


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
    out.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine,
        "settings": settings,
        "boards": [asdict(b) for b in boards],
        "total_seconds": round(total_seconds, 1),
    }
    (out / "access_patterns.json").write_text(json.dumps(document, indent=2) + "\n")
    markdown = header + "\n" + "\n\n".join(board_markdown(b) for b in boards)
    (out / "access_patterns.md").write_text(markdown + "\n\n" + footer + "\n")
    log(f"wrote {out / 'access_patterns.json'} and {out / 'access_patterns.md'}")
