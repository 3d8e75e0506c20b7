"""The results of the under-attack benchmark: each attack document probed alone, what the
attackers got, and both runs of the legitimate clients side by side."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.core.load.hotspots import HotspotReport
from bench.core.load.levels import LevelResult

__all__ = ["AttackRunResult", "AttackerStats", "ProbeStats"]


@dataclass(frozen=True)
class ProbeStats:
    """One attack document sent alone, one request at a time."""

    name: str
    description: str
    size: int
    """The length of its list."""
    cost: int
    p50_ms: float
    max_ms: float
    dynamodb_calls: int
    """The median of the DynamoDB calls each request reported."""
    outcomes: dict[str, int]


@dataclass(frozen=True)
class AttackerStats:
    """What the attackers got in run 2's window."""

    attackers: int
    document: str
    cost: int
    requests: int
    requests_per_second: float
    outcomes: dict[str, int]
    """Answers by ``"<status> <code>"``."""
    p50_ms: dict[str, float]
    """The median latency of each outcome."""
    ran_per_second: float
    """Requests that ran (answered 200) per second."""
    dynamodb_calls_per_second: float
    cpu_cores: float
    """The attackers' own process."""


@dataclass(frozen=True)
class AttackRunResult:
    machine: dict[str, Any]
    settings: dict[str, Any]
    setup: dict[str, Any]
    probes: list[ProbeStats]
    without: LevelResult
    under_attack: LevelResult
    attackers: AttackerStats
    p99_ratio: float
    """Legitimate p99 under attack over the p99 without attackers."""
    target_met: bool
    service_peak_rss_mib: float
    total_seconds: float
    hotspots: HotspotReport | None = None
    notes: list[str] = field(default_factory=list)
