"""The rank index benchmark's data: the options of a run, the loaded board as the benchmark
knows it (with the expected rank of a probe), and the results of each board size (rank latency,
the contract between the two instances, the stream lag)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from dynamo.leaderboards import LeaderboardItem

__all__ = [
    "BoardData",
    "Contract",
    "LagResult",
    "Options",
    "RankLatency",
    "SizeResult",
]


@dataclass(frozen=True)
class Options:
    requests: int
    warmup: int
    count_requests: int
    count_warmup: int
    probes: int
    bulk_max: int
    count_max: int
    lag_submissions: int


@dataclass(frozen=True)
class RankLatency:
    """The rank query against one instance of the app on one board size."""

    source: str
    """``index``, ``index + name`` (the player's name asked too) or ``COUNT``."""
    requests: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    calls: dict[str, int]
    """Every pattern of DynamoDB calls seen over the measured requests, with how often."""
    calls_per_request: float
    """The mean number of DynamoDB calls of a measured request."""
    exact: int
    """Responses equal to the rank computed from the generated scores."""
    failed: int = 0
    """Requests that failed (COUNT only)."""
    raw_p50_ms: float = 0.0
    """The same calls sent from the benchmark's process without HTTP and GraphQL (index only,
    see raw_rank): RankIndex.ranks, the heartbeat and one script (state, layout, the player's
    bucket, ZSCORE, ZCOUNT, ZCARD) in one round trip."""
    raw_p99_ms: float = 0.0
    zcount_calls: int = 0
    """ZCOUNTs the Redis server ran during the measured requests and their raw counterparts
    (index only)."""
    zcount_server_us: float = 0.0
    """The server's mean time per ZCOUNT over them."""


@dataclass(frozen=True)
class Contract:
    """The same probes asked of both instances."""

    sample: int
    same: int
    """Probes whose rank, total and percentile were equal from both instances."""
    exact: int
    """Probes whose answers from both also equal the rank computed from the scores."""


@dataclass(frozen=True)
class LagResult:
    submissions: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    submit_p50_ms: float
    """The submitScore request itself, for scale."""
    timed_out: int
    score_checked: int
    """Entries whose score in the sorted set equalled the submitted one once visible."""


@dataclass(frozen=True)
class SizeResult:
    entries: int
    load_method: str
    load_seconds: float
    index_method: str
    index_seconds: float
    sync_seconds: float
    """From the end of the index build until a complete projector pass over the stream."""
    table_items: int
    redis_used_memory: int
    latencies: list[RankLatency]
    count_skipped: str | None
    contract: Contract | None
    lag: LagResult | None
    verified: str
    total_seconds: float
    load_average: tuple[float, float]
    """The machine's 1-minute load average when the size started and when it ended (other
    processes on the machine included)."""


@dataclass
class BoardData:
    """The loaded board as the benchmark knows it: the probes' scores, and every score (for
    the expected ranks)."""

    item: LeaderboardItem
    entries: int
    probes: list[str]
    scores: dict[str, int]
    """Each probe's current score."""
    sorted_scores: list[int]
    """Every entry's score at load time, ascending."""
    versions: dict[str, int] = field(default_factory=dict)
    """Each probe's entry version, where it changed since loading (else 1)."""

    def expected(self, player_id: str) -> dict[str, Any]:
        """Standard competition rank of the player's loaded score: 1 + strictly better."""
        score = self.scores[player_id]
        total = len(self.sorted_scores)
        rank = 1 + total - bisect.bisect_right(self.sorted_scores, score)
        return {"rank": rank, "total": total, "percentile": 100.0 * (total - (rank - 1)) / total}
