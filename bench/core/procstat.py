"""What Linux's ``/proc`` says about processes and the machine: CPU time, resident memory, the
children of a process and the machine's busy time.

CPU times are in seconds; a share of CPU is CPU seconds per wall-clock second, so one fully
busy core is 1.0 and a 2-core machine tops out at 2.0.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MachineTimes",
    "children",
    "cmdline",
    "cpu_seconds",
    "descendants",
    "machine_times",
    "memory_kib",
    "tree_cpu_seconds",
]

_TICKS = os.sysconf("SC_CLK_TCK")
_PROC = Path("/proc")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used so far (its threads included)."""
    stat = (_PROC / str(pid) / "stat").read_text()
    # The command name (field 2) may hold spaces; the fields after it are plain numbers.
    fields = stat[stat.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / _TICKS


def memory_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` (resident now) and ``VmHWM`` (the peak resident size so far), in KiB."""
    found: dict[str, int] = {}
    for line in (_PROC / str(pid) / "status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0])
    return found


def cmdline(pid: int) -> list[str]:
    """The process's command line, split into its arguments."""
    raw = (_PROC / str(pid) / "cmdline").read_bytes()
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (every thread's), in no particular order."""
    found: set[int] = set()
    for task in (_PROC / str(pid) / "task").iterdir():
        try:
            text = (task / "children").read_text()
        except OSError:
            continue
        found.update(int(p) for p in text.split())
    return sorted(found)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``: its children, theirs, and so on."""
    found: list[int] = []
    pending = [pid]
    while pending:
        try:
            below = children(pending.pop())
        except OSError:
            continue
        found.extend(below)
        pending.extend(below)
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU time so far of ``pid`` and of every process below it (a master and its workers),
    added up; a process that ends while it is read counts for nothing."""
    total = 0.0
    for each in [pid, *descendants(pid)]:
        try:
            total += cpu_seconds(each)
        except OSError:
            continue
    return total


@dataclass(frozen=True)
class MachineTimes:
    """The machine's CPU time so far, all cores added up, in seconds."""

    busy: float
    total: float

    def busy_cores(self, since: MachineTimes) -> float:
        """Cores kept busy on average since ``since`` (0 .. the number of cores)."""
        total = self.total - since.total
        if total <= 0:
            return 0.0
        return (self.busy - since.busy) / total * (os.cpu_count() or 1)


def machine_times() -> MachineTimes:
    """The machine-wide counters of the first line of ``/proc/stat``."""
    first = (_PROC / "stat").read_text().splitlines()[0].split()
    user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in first[1:9])
    busy = user + nice + system + irq + softirq + steal
    return MachineTimes(busy=busy / _TICKS, total=(busy + idle + iowait) / _TICKS)
