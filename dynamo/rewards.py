"""Reward tiers: what a board's final standings give each entrant.

A board (or a family, for the boards it makes) declares up to MAX_TIERS tiers, in order. At
the board's close each entrant's result takes the first tier it qualifies for, and that tier's
reward (an id and a quantity, opaque to the service: the game knows what they are):

- ``RANKS``: a rank from ``fromRank`` to ``toRank``, both included (``1..1``, ``2..3``,
  ``4..10``);
- ``TOP_PERCENT``: a rank within the first ``topPercent`` per cent of the entrants, that is
  ``rank <= ceil(total * topPercent / 100)`` (top 1%: the first 10 ranks of 1,000 entrants,
  and at least the first rank however few entered);
- ``SCORE``: a score at least as good as ``score`` (at least it where higher is better, at most
  it on an ASC board).

Ranks are the board's (standard competition ranking), so entrants who tie share their rank and
with it their tier: when three tie for 10th, all three are within ``4..10``, and the next
entrant is 13th.
"""

from __future__ import annotations

import math
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction

from dynamo.items import Item

__all__ = [
    "MAX_QUANTITY",
    "MAX_REWARD_ID",
    "MAX_TIERS",
    "RewardTier",
    "TierKind",
    "tier_of",
]

MAX_TIERS = 20
"""The most tiers one board or family declares."""
MAX_REWARD_ID = 64
"""The longest reward id, in characters."""
MAX_QUANTITY = 10**9
"""The largest quantity of a tier's reward."""


class TierKind(StrEnum):
    RANKS = "RANKS"
    TOP_PERCENT = "TOP_PERCENT"
    SCORE = "SCORE"


class RewardTier(Item):
    kind: TierKind
    reward_id: str
    quantity: int = 1
    from_rank: int | None = None
    """RANKS: the first rank of the tier."""
    to_rank: int | None = None
    """RANKS: the last rank of the tier, included."""
    top_percent: Decimal | None = None
    """TOP_PERCENT: the share of the entrants, in per cent (0 < topPercent <= 100): exact, and
    stored as its decimal text."""
    score: int | None = None
    """SCORE: the score an entrant's must be at least as good as."""

    def admits(self, rank: int, total: int, score: int, *, higher_is_better: bool) -> bool:
        """Whether an entrant of ``rank`` among ``total``, with ``score``, is in the tier."""
        if self.kind is TierKind.RANKS:
            low = self.from_rank or 1
            return low <= rank and (self.to_rank is None or rank <= self.to_rank)
        if self.kind is TierKind.TOP_PERCENT:
            share = Fraction(str(self.top_percent or 0)) * total / 100
            return rank <= max(1, math.ceil(share))
        if self.score is None:
            return False
        return score >= self.score if higher_is_better else score <= self.score


def tier_of(
    tiers: list[RewardTier], rank: int, total: int, score: int, *, higher_is_better: bool
) -> int | None:
    """The index of the first of ``tiers`` the entrant qualifies for; None for none."""
    return next(
        (
            i
            for i, tier in enumerate(tiers)
            if tier.admits(rank, total, score, higher_is_better=higher_is_better)
        ),
        None,
    )
