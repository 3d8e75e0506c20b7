"""The fleet's chart: requests per second and p99 latency of every configuration, one bar per
number of clients, with the targets."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from bench.core.report import TARGET_P99_MS, TARGET_RPS
from bench.fleet.results import FleetResult

__all__ = ["fleet_chart"]

_DPI = 120


def fleet_chart(result: FleetResult, path: Path) -> Path:
    """Draw the chart of ``result`` into ``path``; the path."""
    names = [m.name for m in result.measured]
    clients = sorted({lv.clients for m in result.measured for lv in m.levels})
    width = 0.8 / max(1, len(clients))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.6))
    for i, count in enumerate(clients):
        at = [next((lv for lv in m.levels if lv.clients == count), None) for m in result.measured]
        xs = [n + (i - (len(clients) - 1) / 2) * width for n in range(len(names))]
        label = f"{count} clients"
        left.bar(xs, [lv.throughput_rps if lv else 0 for lv in at], width, label=label)
        right.bar(xs, [lv.p99_ms if lv else 0 for lv in at], width, label=label)
    left.axhline(TARGET_RPS, color="tab:red", linestyle="--", linewidth=1, label="target")
    right.axhline(TARGET_P99_MS, color="tab:red", linestyle="--", linewidth=1, label="target")
    left.set_title("Throughput")
    left.set_ylabel("requests / s")
    right.set_title("p99 latency")
    right.set_ylabel("ms")
    for ax in (left, right):
        ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path
