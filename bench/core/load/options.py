"""The options of a run of the mixed workload (the clients, the window, the board, the ranks,
the load generators) and the settings a report states."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.core.load.loadgen import MIX

__all__ = ["PREWARM_CLIENTS", "Options", "settings_of"]

PREWARM_CLIENTS = 8
"""Clients of the unrecorded pre-warm load before the first level."""


@dataclass(frozen=True)
class Options:
    """How a run of the mixed workload goes: the levels' clients, each level's warm-up and
    measured window, the board, where ranks come from, the load-generator processes, the seed,
    the output folder and the profiled level."""

    clients: list[int]
    duration: float
    warmup: float
    entries: int
    ranks: str
    """``index`` (Redis rank index and its projector) or ``count`` (COUNT queries)."""
    generators: int
    seed: int
    out: Path
    profile: int | None
    prewarm: float = 10.0
    """Seconds of unrecorded load at PREWARM_CLIENTS clients before the first level."""
    network: int | None = None
    """With a number, each client claims an X-Forwarded-For address of its own in
    ``10.<network>.0.0/16`` (see :func:`bench.core.load.loadgen.forwarded_address`)."""


def settings_of(options: Options) -> dict[str, Any]:
    """The settings a report states."""
    return {
        "clients": options.clients,
        "duration_seconds": options.duration,
        "warmup_seconds": options.warmup,
        "entries": options.entries,
        "ranks": options.ranks,
        "generators": options.generators,
        "seed": options.seed,
        "mix_percent": dict(MIX),
        "profile_clients": options.profile,
        "prewarm_seconds": options.prewarm,
        "prewarm_clients": PREWARM_CLIENTS,
    }
