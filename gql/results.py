"""FinalResult: a player's standing on a board once the board's close has frozen it."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.types import Info

from dynamo.players import PlayerItem
from dynamo.results import ResultItem
from gql.rewards import Reward, RewardClaim
from gql.scalars import JSON, Long
from resolvers import claims
from resolvers.context import Context
from resolvers.erased import board_gone, erased_meanwhile

if TYPE_CHECKING:
    from gql.leaderboards import Leaderboard
    from gql.players import Player

__all__ = ["FinalResult"]


@strawberry.type(
    description="A player's place in a board's final standings, written once when the "
    "board's close is complete (Leaderboard.status FINAL): it never changes."
)
class FinalResult:
    item: strawberry.Private[ResultItem]

    # Plain values, copied from the item when the result is made (a page has a hundred).
    position: int = strawberry.field(
        description="The entry's place in the board's final order, 1 to total: better scores "
        "first, equal scores in the order the board lists them (the earlier attainment first), "
        "so every entrant has a position of its own.",
        default=0,
    )
    rank: int = strawberry.field(
        description="Standard competition rank: 1 + the number of entrants with a strictly "
        'better score. Tied entrants share a rank ("1224").',
        default=0,
    )
    total: int = strawberry.field(
        description="Number of entrants in the board's final standings.", default=0
    )
    percentile: float = strawberry.field(
        description="Share of the entrants, in percent (0-100], that this entry beats or ties, "
        "itself included: 100 * (total - (rank - 1)) / total, as Rank.percentile.",
        default=0.0,
    )
    score: Long = strawberry.field(
        description="The entry's score when the board closed.", default=Long(0)
    )
    attained_at: datetime = strawberry.field(
        description="When the entry's score was attained.", default=datetime.min
    )
    session_id: strawberry.ID | None = strawberry.field(
        description="The session that produced the score.", default=None
    )
    metadata: JSON | None = strawberry.field(
        description="The metadata of the play that attained the entry (as Score.metadata), "
        "null when it had none.",
        default=None,
    )
    tier: int | None = strawberry.field(
        description="The index in the board's rewardTiers (0 for the first) of the tier the "
        "result is in: the first tier it qualified for at the close; null for none.",
        default=None,
    )
    reward: Reward | None = strawberry.field(
        description="What the result's tier gives (claimReward grants it once); null when the "
        "result is in no tier.",
        default=None,
    )

    def __post_init__(self) -> None:
        item = self.item
        self.position = item.position
        self.rank = item.rank
        self.total = item.total
        self.percentile = item.percentile
        self.score = Long(item.score)
        self.attained_at = item.attained_at
        self.session_id = strawberry.ID(item.session_id) if item.session_id else None
        self.metadata = JSON(item.metadata) if item.metadata is not None else None
        self.tier = item.tier
        if item.reward_id is not None and item.reward_quantity is not None:
            self.reward = Reward(id=item.reward_id, quantity=item.reward_quantity)

    @strawberry.field(
        description="The claim of the result's reward (claimReward); null until it is claimed, "
        "and for a result with no reward.",
        graphql_type=RewardClaim | None,
    )
    def claim(
        self, info: Info[Context, None]
    ) -> RewardClaim | Awaitable[RewardClaim | None] | None:
        if self.reward is None:
            return None  # nothing to claim, nothing to read
        return self._claim(info)

    async def _claim(self, info: Info[Context, None]) -> RewardClaim | None:
        found = await claims.resolve_claim(info.context, self.item)
        return RewardClaim.of(found) if found is not None else None

    @strawberry.field(description="The board.")
    async def leaderboard(
        self, info: Info[Context, None]
    ) -> Annotated[Leaderboard, strawberry.lazy("gql.leaderboards")]:
        from gql.leaderboards import Leaderboard

        board = await info.context.loaders.leaderboard.load(self.item.leaderboard_id)
        if board is None:
            raise board_gone(self.item.leaderboard_id)
        return Leaderboard(item=board)

    @strawberry.field(
        description="The player.",
        graphql_type=Annotated["Player", strawberry.lazy("gql.players")],
    )
    def player(self, info: Info[Context, None]) -> Player | Awaitable[Player]:
        # Synchronous when the list this result came in read its players already.
        held, player = info.context.loaders.player.held(self.item.player_id)
        return self._player(player) if held else self._load_player(info)

    async def _load_player(self, info: Info[Context, None]) -> Player:
        return self._player(await info.context.loaders.player.load(self.item.player_id))

    def _player(self, item: PlayerItem | None) -> Player:
        from gql.players import Player

        if item is None:
            raise erased_meanwhile(self.item.player_id)
        return Player.of(item)

    @classmethod
    def of(cls, item: ResultItem) -> FinalResult:
        return cls(item=item)
