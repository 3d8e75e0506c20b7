"""Rewards: a board's reward tiers, the reward of a final result, and its claim."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dynamo.claims import ClaimItem
from dynamo.rewards import RewardTier as RewardTierItem
from gql.enums import TierKind
from gql.errors import UserError
from gql.scalars import Long

__all__ = ["ClaimRewardPayload", "Reward", "RewardClaim", "RewardTier", "tiers_of"]

TIERS = (
    "The reward tiers of the board's final standings, in order (empty for none): at the "
    "board's close each entrant's result takes the first tier it qualifies for, and that "
    "tier's reward (FinalResult.tier, FinalResult.reward). Ranks are standard competition "
    "ranks, so entrants who tie share a rank and with it a tier."
)


@strawberry.type(
    description="One reward tier of a board's final standings: which entrants it takes (by "
    "their rank, their share of the entrants or their score) and what it gives them. An "
    "entrant takes the first tier of the board's list it qualifies for."
)
class RewardTier:
    kind: TierKind = strawberry.field(description="Which entrants the tier takes.")
    reward_id: str = strawberry.field(
        description="What the tier gives, as the game names it (opaque to the service)."
    )
    quantity: int = strawberry.field(description="How many of it each entrant of the tier gets.")
    from_rank: int | None = strawberry.field(
        description="RANKS: the first rank of the tier; null for the other kinds."
    )
    to_rank: int | None = strawberry.field(
        description="RANKS: the last rank of the tier, included; null for no upper bound, and "
        "for the other kinds."
    )
    top_percent: float | None = strawberry.field(
        description="TOP_PERCENT: the share of the entrants, in per cent (above 0, at most "
        "100): the ranks up to ceil(total * topPercent / 100), at least rank 1; null for the "
        "other kinds."
    )
    score: Long | None = strawberry.field(
        description="SCORE: the threshold an entrant's score must reach (the score or more on "
        "a DESC board, the score or less on an ASC board); null for the other kinds."
    )

    @classmethod
    def of(cls, tier: RewardTierItem) -> RewardTier:
        percent = tier.top_percent
        return cls(
            kind=tier.kind,
            reward_id=tier.reward_id,
            quantity=tier.quantity,
            from_rank=tier.from_rank,
            to_rank=tier.to_rank,
            top_percent=float(percent) if percent is not None else None,
            score=Long(tier.score) if tier.score is not None else None,
        )


def tiers_of(tiers: list[RewardTierItem] | None) -> list[RewardTier]:
    return [RewardTier.of(t) for t in tiers or []]


@strawberry.type(description="A reward: what the game grants, as it names it, and how many.")
class Reward:
    id: str = strawberry.field(description="The reward's id, as the tier gives it.")
    quantity: int = strawberry.field(description="How many of it.")


@strawberry.type(
    description="The claim of a final result's reward (claimReward): written once, by the "
    "first claim; it never changes."
)
class RewardClaim:
    item: strawberry.Private[ClaimItem]

    @strawberry.field(description="The board of the result claimed.")
    def leaderboard_id(self) -> strawberry.ID:
        return strawberry.ID(self.item.leaderboard_id)

    @strawberry.field(description="The player whose result was claimed.")
    def player_id(self) -> strawberry.ID:
        return strawberry.ID(self.item.player_id)

    @strawberry.field(description="The reward claimed: the result's, as the close gave it.")
    def reward(self) -> Reward:
        return Reward(id=self.item.reward_id, quantity=self.item.quantity)

    @strawberry.field(description="When the first claim was written.")
    def claimed_at(self) -> datetime:
        return self.item.claimed_at

    @classmethod
    def of(cls, item: ClaimItem) -> RewardClaim:
        return cls(item=item)


@strawberry.type(description="The result of claimReward.")
class ClaimRewardPayload:
    claim: RewardClaim | None = strawberry.field(
        description="The claim: the one this call wrote, or, with ALREADY_CLAIMED, the first "
        "claim of the result (its claimedAt is that claim's); null on any other error."
    )
    errors: list[UserError] = strawberry.field(
        description="Why nothing was written, if so: ALREADY_CLAIMED when the result was "
        "claimed before (claim is that first claim), NO_REWARD when there is no result with "
        "a reward to claim."
    )
