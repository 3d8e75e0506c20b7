"""The results of a run of the mixed workload: the machine, the settings, the set-up, every
level, the service's peak memory and the hot spots when it was profiled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.core.load.hotspots import HotspotReport
from bench.core.load.levels import LevelResult

__all__ = ["MixedResult"]


@dataclass(frozen=True)
class MixedResult:
    machine: dict[str, Any]
    settings: dict[str, Any]
    setup: dict[str, Any]
    levels: list[LevelResult]
    service_peak_rss_mib: float
    service_log_bytes: int
    total_seconds: float
    hotspots: HotspotReport | None = None
    notes: list[str] = field(default_factory=list)
