"""The results of a run: every sample, and per kind the median over the rounds, its ratio to
the median of ``{ __typename }``, and what the response cache answered; with a baseline
checkout, the same of its service."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.cpu.kinds import REFERENCE, Kind
from bench.cpu.measure import Sample

__all__ = ["BaselineResult", "CpuResult", "KindSummary", "summarize"]


@dataclass(frozen=True)
class KindSummary:
    """One kind over every round."""

    key: str
    name: str
    configuration: str
    cpu_ms_per_request: float
    """The median over the rounds of the service's CPU milliseconds per request."""
    cpu_ms_min: float
    cpu_ms_max: float
    ratio: float | None
    """``cpu_ms_per_request`` over ``{ __typename }``'s (None when it was not measured)."""
    wall_p50_ms: float
    """The median over the rounds of each round's client-side p50."""
    requests: int
    """Measured requests, every round's."""
    cache_hits: int | None = None
    cache_misses: int | None = None


@dataclass(frozen=True)
class BaselineResult:
    """The same kinds measured in the same rounds against the service of another checkout of
    this repository, the baseline: its folder, its commit and this checkout's (``git
    rev-parse --short HEAD``, noting uncommitted changes; 'unknown' without git), and its
    summaries and samples."""

    path: str
    commit: str
    checkout_commit: str
    kinds: list[KindSummary]
    samples: list[Sample]

    def kind(self, key: str) -> KindSummary | None:
        return next((k for k in self.kinds if k.key == key), None)


@dataclass(frozen=True)
class CpuResult:
    machine: dict[str, Any]
    settings: dict[str, Any]
    setup: dict[str, Any]
    kinds: list[KindSummary]
    samples: list[Sample]
    load_average: tuple[float, float]
    """The machine's 1-minute load average at the start and at the end of the run."""
    total_seconds: float
    notes: list[str] = field(default_factory=list)
    baseline: BaselineResult | None = None

    def kind(self, key: str) -> KindSummary | None:
        return next((k for k in self.kinds if k.key == key), None)


def _total(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def summarize(kinds: Sequence[Kind], samples: Sequence[Sample]) -> list[KindSummary]:
    """Per kind measured, in ``kinds`` order: medians over its samples, and the ratio of its
    median to that of ``{ __typename }`` (without the cache)."""
    by_kind = {k.key: [s for s in samples if s.kind == k.key] for k in kinds}
    medians = {
        key: statistics.median(s.cpu_ms_per_request for s in found)
        for key, found in by_kind.items()
        if found
    }
    reference = medians.get(REFERENCE)
    summaries: list[KindSummary] = []
    for kind in kinds:
        found = by_kind[kind.key]
        if not found:
            continue
        cpu = [s.cpu_ms_per_request for s in found]
        summaries.append(
            KindSummary(
                key=kind.key,
                name=kind.name,
                configuration=kind.configuration.name,
                cpu_ms_per_request=medians[kind.key],
                cpu_ms_min=min(cpu),
                cpu_ms_max=max(cpu),
                ratio=medians[kind.key] / reference if reference else None,
                wall_p50_ms=statistics.median(s.wall_p50_ms for s in found),
                requests=sum(s.requests for s in found),
                cache_hits=_total([s.cache_hits for s in found]),
                cache_misses=_total([s.cache_misses for s in found]),
            )
        )
    return summaries
