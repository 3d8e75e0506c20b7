"""What every benchmark prints and writes: progress on stderr, the machine it ran on, the
targets its reports are judged against, and its results as a JSON and a Markdown file in the
output folder."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.core.stack import dynamodb_local_version
from leaderboard.embedded_dynamodb import DYNAMODB_LOCAL, EmbeddedDynamoDB

__all__ = [
    "ATTACK_P99_RATIO",
    "RSS_TARGET_MB",
    "TARGET_CLIENTS",
    "TARGET_P99_MS",
    "TARGET_RPS",
    "TOP100_OPERATION",
    "TOP100_SHARDED_TARGET_RATIO",
    "TOP100_TARGET_RATIO",
    "log",
    "machine_info",
    "machine_lines",
    "run_document",
    "save_json",
    "save_results",
]

TOP100_OPERATION = "top 100 with player names"
TOP100_TARGET_RATIO = 1.3
"""Target: the top 100 with names at most this many times the raw calls' p50, same run."""
TOP100_SHARDED_TARGET_RATIO = 1.5
"""Target: the top 100 with names on a write-sharded board (8 partitions) at most this many
times the p50 of its raw calls (the board, one Query per partition, the names), same run."""
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


def _write_json(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=2) + "\n")


def save_json(out: Path, name: str, document: Any) -> Path:
    """Write ``<name>.json`` (indented, ending in a newline) into ``out``, creating it if
    needed; the file written."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    _write_json(path, document)
    log(f"wrote {path}")
    return path


def save_results(out: Path, name: str, document: Any, markdown: str) -> None:
    """Write ``<name>.json`` (every number) and ``<name>.md`` (the printed report) into
    ``out``, creating it if needed."""
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / f"{name}.json", document)
    (out / f"{name}.md").write_text(markdown.rstrip("\n") + "\n")
    log(f"wrote {out / name}.json and {out / name}.md")


def run_document(
    *,
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    key: str,
    parts: Sequence[Any],
    total_seconds: float,
) -> dict[str, Any]:
    """The JSON document of a run over several sizes: the machine, the settings, each size's
    result (a dataclass) as a list under ``key``, and the run time to a tenth of a second."""
    return {
        "machine": machine,
        "settings": settings,
        key: [asdict(part) for part in parts],
        "total_seconds": round(total_seconds, 1),
    }


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
