"""The ``leaderboard`` command in this process, with cProfile switched on and off by signals.

``python -m bench.cpu.profiled_serve STATS ARGUMENTS...`` runs ``leaderboard ARGUMENTS...``
(``serve ...``). SIGUSR1 starts the profiler and then creates ``STATS.on``; SIGUSR2 stops it
and writes its statistics to ``STATS`` (pstats' format, a marshalled dict; written whole, then
renamed into place). The profiler's clock is the process's CPU time
(:func:`time.process_time`), so that time spent waiting for a request, for DynamoDB or for
the machine's other work counts for nothing. The start-up before SIGUSR1 is not profiled.
"""

from __future__ import annotations

import cProfile
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

__all__ = ["main", "marker_of"]


def marker_of(stats: Path) -> Path:
    """The file that says the profiler has started."""
    return stats.with_name(stats.name + ".on")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``leaderboard`` with the arguments after the statistics file; its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print("usage: python -m bench.cpu.profiled_serve STATS ARGUMENTS...", file=sys.stderr)
        return 2
    stats = Path(args[0])
    profiler = cProfile.Profile(time.process_time)

    def start(signum: int, frame: FrameType | None) -> None:
        profiler.enable()
        marker_of(stats).touch()

    def stop(signum: int, frame: FrameType | None) -> None:
        profiler.disable()
        partial = stats.with_name(stats.name + ".partial")
        profiler.dump_stats(partial)
        os.replace(partial, stats)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from leaderboard.cli import main as leaderboard

    return leaderboard(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
