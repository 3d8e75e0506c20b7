"""The results of a hot-board run: each case's two phases, what the proxy's conflict rule did
in each, and the boards' counts after them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from bench.hot_board.clients import PhaseStats
from bench.hot_board.conflicts import ConflictSummary

__all__ = ["CaseResult", "HotBoardResult", "PhaseResult"]


@dataclass(frozen=True)
class PhaseResult:
    """One phase of one case: its plays, and the conflict rule over it."""

    phase: str
    plays: PhaseStats
    conflicts: ConflictSummary


@dataclass(frozen=True)
class CaseResult:
    """One case: the burst of first entries, then the steady state; and each board's
    ``entryCount`` after both, beside the players entered on it."""

    name: str
    boards: int
    partitions: int
    burst: PhaseResult
    steady: PhaseResult
    entry_counts: dict[str, int]
    """Each board's entryCount, read consistently after the case."""
    entered: dict[str, int]
    """Each board's players with an acknowledged play on it."""

    @property
    def spread(self) -> bool:
        return self.boards > 1

    @property
    def counts_exact(self) -> bool:
        """Whether every board counts exactly the players entered on it."""
        return self.entry_counts == self.entered


@dataclass(frozen=True)
class HotBoardResult:
    machine: dict[str, Any]
    settings: dict[str, Any]
    cases: list[CaseResult]
    total_seconds: float
    notes: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """Every number, for ``hot_board.json`` (with each phase's count-shard conflicts per
        hundred transactions)."""
        document = asdict(self)
        for case, out in zip(self.cases, document["cases"], strict=True):
            out["counts_exact"] = case.counts_exact
            for phase in ("burst", "steady"):
                summary = getattr(case, phase).conflicts
                out[phase]["conflicts"]["count_shard_percent"] = round(
                    summary.count_shard_percent, 3
                )
        return document
