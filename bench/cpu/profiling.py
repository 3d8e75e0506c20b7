"""Where one kind's CPU goes: the service started under :mod:`bench.cpu.profiled_serve`,
the profiler switched on for the measured requests only, and its statistics as two tables,
the functions by their own time and by their cumulative time, per request."""

from __future__ import annotations

import marshal
import os
import signal
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.core.processes import ServiceProcess, service_process
from bench.cpu.profiled_serve import marker_of
from bench.cpu.stack import Launcher

__all__ = ["TOP", "profile_tables", "profiled_service", "switch_off", "switch_on"]

TOP = 30
"""Functions listed in each table."""
_REPO = Path(__file__).resolve().parents[2]
_SWITCH_TIMEOUT_SECONDS = 30.0
_POLL_SECONDS = 0.05

_Key = tuple[str, int, str]
"""A function in pstats' statistics: its file, first line and name."""
_Entry = tuple[int, int, float, float, Any]
"""Primitive calls, all calls, own time, cumulative time, callers."""


def profiled_service(stats: Path) -> Launcher:
    """A launcher of ``leaderboard serve --workers 1`` under
    :mod:`bench.cpu.profiled_serve`, writing its statistics to ``stats``; otherwise started
    and configured as :func:`bench.core.processes.service_process` starts it."""

    @contextmanager
    def launch(
        endpoint_url: str,
        *,
        table: str,
        redis_url: str | None,
        log_dir: Path,
        environment: Mapping[str, str],
    ) -> Iterator[ServiceProcess]:
        path = os.pathsep.join(filter(None, [str(_REPO), os.environ.get("PYTHONPATH")]))
        with service_process(
            endpoint_url,
            table=table,
            redis_url=redis_url,
            log_dir=log_dir,
            environment={**environment, "PYTHONPATH": path},
            launcher=[sys.executable, "-m", "bench.cpu.profiled_serve", str(stats)],
        ) as service:
            yield service

    return launch


def _appears(path: Path, what: str) -> None:
    deadline = time.monotonic() + _SWITCH_TIMEOUT_SECONDS
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the profiled service did not {what} within the time allowed")
        time.sleep(_POLL_SECONDS)


def switch_on(pid: int, stats: Path) -> None:
    """Start the profiler of the service ``pid``; return once it runs."""
    os.kill(pid, signal.SIGUSR1)
    _appears(marker_of(stats), "start its profiler")


def switch_off(pid: int, stats: Path) -> None:
    """Stop the profiler of the service ``pid``; return once its statistics are written."""
    os.kill(pid, signal.SIGUSR2)
    _appears(stats, "write its profile")


def _short(path: str) -> str:
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    try:
        return str(Path(path).resolve().relative_to(_REPO))
    except (ValueError, OSError):
        pass
    _, found, rest = path.partition("/lib/python")
    return f"python{rest}" if found else path


def _function(key: _Key) -> str:
    path, line, name = key
    if path == "~":
        return name
    return f"{name} ({_short(path)}:{line})"


def _table(rows: list[tuple[_Key, _Entry]], requests: int, total: float) -> list[str]:
    lines = [f"{'calls':>8} {'tottime ms':>11} {'share':>6} {'cumtime ms':>11}  function"]
    for key, (_, calls, own, cumulative, _) in rows:
        lines.append(
            f"{calls / requests:8.2f} {1000 * own / requests:11.4f}"
            f" {100 * own / total if total else 0.0:5.1f}% {1000 * cumulative / requests:11.4f}"
            f"  {_function(key)}"
        )
    return lines


def profile_tables(stats: Path, *, requests: int, top: int = TOP) -> str:
    """The top ``top`` functions by own time and by cumulative time, per request (calls,
    milliseconds), from the statistics in ``stats`` (of ``requests`` requests)."""
    entries: dict[_Key, _Entry] = marshal.loads(stats.read_bytes())
    total = sum(entry[2] for entry in entries.values())
    items = list(entries.items())
    by_own = sorted(items, key=lambda item: item[1][2], reverse=True)[:top]
    by_cumulative = sorted(items, key=lambda item: item[1][3], reverse=True)[:top]
    return "\n".join(
        [
            f"{1000 * total / requests:.3f} ms of CPU per request in the profiled functions"
            f" ({requests} requests; the profiler's own cost included). Per request: calls,"
            " own time (tottime), its share of the total, and time with callees (cumtime).",
            "",
            f"Top {top} by total time (tottime):",
            "",
            *_table(by_own, requests, total),
            "",
            f"Top {top} by cumulative time (cumtime):",
            "",
            *_table(by_cumulative, requests, total),
        ]
    )
