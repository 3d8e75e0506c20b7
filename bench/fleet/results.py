"""The results of a fleet run: every configuration's levels and single-kind run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.core.load.levels import LevelResult

__all__ = ["FleetResult", "Measured"]


@dataclass(frozen=True)
class Measured:
    """One configuration: its levels of the mix and, if measured, its single-kind run."""

    name: str
    workers: int
    """Service worker processes; 0 for the raw calls."""
    cache: bool
    levels: list[LevelResult]
    single: LevelResult | None = None


@dataclass(frozen=True)
class FleetResult:
    machine: dict[str, Any]
    settings: dict[str, Any]
    setup: dict[str, Any]
    measured: list[Measured]
    total_seconds: float
    notes: list[str] = field(default_factory=list)
