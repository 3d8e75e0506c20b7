"""The benchmark's charts, drawn with matplotlib (Agg backend, no display) from the JSON
results in a folder:

- ``mixed.png`` from ``mixed.json``: requests per second, and p50 and p99 latency, against the
  number of concurrent clients, with the targets;
- ``access_patterns.png`` from ``access_patterns.json``: p50 latency of every operation through
  the service next to its raw DynamoDB calls, one panel per board size.

``python -m bench.core.charts [--out bench/results]`` redraws whichever of them has its JSON.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from bench.core.report import TARGET_CLIENTS, TARGET_P99_MS, TARGET_RPS

__all__ = ["access_patterns_chart", "main", "mixed_chart", "write_charts"]

_DPI = 120
_LOG_TICKS = [0.5, 1, 2, 5, 10, 20, 50, 100, 1000, 10000]


def mixed_chart(document: Any, path: Path) -> Path:
    """Throughput and latency against clients, from a ``mixed.json`` document."""
    levels = [lv for lv in document["levels"] if not lv.get("profiled")]
    clients = [lv["clients"] for lv in levels]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))

    left.plot(clients, [lv["throughput_rps"] for lv in levels], marker="o", label="measured")
    left.axhline(TARGET_RPS, color="tab:red", linestyle="--", linewidth=1, label="target")
    left.axvline(TARGET_CLIENTS, color="grey", linestyle=":", linewidth=1)
    left.set_title("Throughput")
    left.set_xlabel("concurrent clients")
    left.set_ylabel("requests / s")
    left.set_ylim(bottom=0)

    right.plot(clients, [lv["p50_ms"] for lv in levels], marker="o", label="p50")
    right.plot(clients, [lv["p99_ms"] for lv in levels], marker="s", label="p99")
    right.axhline(TARGET_P99_MS, color="tab:red", linestyle="--", linewidth=1, label="p99 target")
    right.axvline(TARGET_CLIENTS, color="grey", linestyle=":", linewidth=1)
    right.set_title("Latency")
    right.set_xlabel("concurrent clients")
    right.set_ylabel("ms")
    right.set_ylim(bottom=0)

    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(clients, [str(c) for c in clients])
        ax.minorticks_off()
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    settings = document["settings"]
    ranks = "rank index" if settings.get("ranks") == "index" else "COUNT ranks"
    fig.suptitle(
        f"Mixed workload (80% reads, 20% submissions), {settings['entries']:,}-player board,"
        f" {ranks}, {document['machine'].get('cpu_count', '?')} cores shared with DynamoDB Local",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def access_patterns_chart(document: Any, path: Path) -> Path:
    """Service p50 next to raw p50 for every operation, one panel per board size, from an
    ``access_patterns.json`` document."""
    boards: Sequence[Any] = document["boards"]
    names = [op["name"] for op in boards[0]["operations"]]
    fig, axes = plt.subplots(
        1, len(boards), figsize=(5.2 * len(boards) + 2.5, 0.42 * len(names) + 1.6), sharey=True
    )
    panels = list(axes) if len(boards) > 1 else [axes]
    height = 0.38
    positions = list(range(len(names)))
    everything = [
        v for b in boards for op in b["operations"] for v in (op["p50_ms"], op["raw_p50_ms"])
    ]
    left, right = min(everything) / 2, max(everything) * 4
    for ax, board in zip(panels, boards, strict=True):
        by_name = {op["name"]: op for op in board["operations"]}
        service = [by_name[n]["p50_ms"] if n in by_name else 0.0 for n in names]
        raw = [by_name[n]["raw_p50_ms"] if n in by_name else 0.0 for n in names]
        ax.barh([p - height / 2 for p in positions], service, height, label="service (GraphQL)")
        ax.barh([p + height / 2 for p in positions], raw, height, label="raw aioboto3 calls")
        for p, n, value in zip(positions, names, service, strict=True):
            if n in by_name:
                ax.text(
                    value * 1.08,
                    p - height / 2,
                    f"{value:.1f} ms, {by_name[n]['ratio']:.2f}x",
                    va="center",
                    fontsize=7,
                )
        ax.set_xscale("log")
        ax.set_xlim(left, right)
        ax.xaxis.set_major_locator(FixedLocator([t for t in _LOG_TICKS if left <= t <= right]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{board['entries']:,} entries", fontsize=10)
        ax.set_xlabel("p50 ms (log scale); label: service p50, service/raw")
        ax.grid(True, axis="x", alpha=0.3)
    panels[0].set_yticks(positions, names, fontsize=8)
    panels[0].invert_yaxis()
    panels[-1].legend(loc="lower right", fontsize=8)
    fig.suptitle("Access patterns: p50 through the service vs. the raw DynamoDB calls", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def write_charts(out: Path) -> list[Path]:
    """Draw every chart whose JSON is in ``out``; the files written."""
    written: list[Path] = []
    mixed = out / "mixed.json"
    if mixed.is_file():
        written.append(mixed_chart(json.loads(mixed.read_text()), out / "mixed.png"))
    patterns = out / "access_patterns.json"
    if patterns.is_file():
        document = json.loads(patterns.read_text())
        if document.get("boards"):
            written.append(access_patterns_chart(document, out / "access_patterns.png"))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.core.charts", description="Draw the benchmark's PNG charts."
    )
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="results folder")
    args = parser.parse_args(argv)
    for path in write_charts(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
