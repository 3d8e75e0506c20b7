"""Score (a player's entry on a board) and Rank (its position)."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Annotated, cast

import strawberry
from strawberry.types import Info

from dynamo.players import PlayerItem
from dynamo.scores import ScoreItem
from gql.plain import UNSETTLED, plain_getter
from gql.scalars import JSON, Long
from resolvers.context import Context
from resolvers.dependencies import PlayerName
from resolvers.erased import board_gone, erased_meanwhile
from resolvers.loaders import RankInfo
from resolvers.ranks import WindowRanks, resolve_ranked_entry, resolve_score_rank

if TYPE_CHECKING:
    from gql.leaderboards import Leaderboard
    from gql.players import Player

__all__ = ["NAME_FIELDS", "Rank", "Score"]

NAME_FIELDS = frozenset({"id", "__typename", "name"})
"""The fields of an entry's player that the entry's copy of its name serves (Score.names)."""


@strawberry.type(description="A player's entry on a board: their score there.")
class Score:
    item: strawberry.Private[ScoreItem]
    window: strawberry.Private[WindowRanks | None] = None
    names: strawberry.Private[bool] = False
    """Whether the player's name is all that is asked of its player besides its id: then
    the entry's copy of it serves, where the entry holds one, and the player is not read."""

    # Resolvers of ``self`` alone: plain execution calls them directly, and only for the
    # fields a query selects (a page has a hundred scores).
    @strawberry.field(description="The score.")
    def score(self) -> Long:
        return Long(self.item.score)

    @strawberry.field(description="When the score was attained.")
    def attained_at(self) -> datetime:
        return self.item.attained_at

    @strawberry.field(description="The session that produced the score.")
    def session_id(self) -> strawberry.ID | None:
        session = self.item.session_id
        return strawberry.ID(session) if session else None

    @strawberry.field(
        description="The metadata of the play that attained the entry (SubmitScoreInput."
        "metadata), null when it had none. An INCREMENT total keeps its attaining play's."
    )
    def metadata(self) -> JSON | None:
        metadata = self.item.metadata
        return JSON(metadata) if metadata is not None else None

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
        # Synchronous when the entry holds the name asked for, or when the list this score
        # came in read its players already.
        at_hand = _player_at_hand(self, info.context)
        if at_hand is not UNSETTLED:
            return cast("Player", at_hand)
        held, player = info.context.loaders.player.held(self.item.player_id)
        return self._player(player) if held else self._load_player(info)

    async def _load_player(self, info: Info[Context, None]) -> Player:
        return self._player(await info.context.loaders.player.load(self.item.player_id))

    def _player(self, item: PlayerItem | None) -> Player:
        from gql.players import Player

        if item is None:
            raise erased_meanwhile(self.item.player_id)
        return Player.of(item)

    @strawberry.field(
        description="The entry's standard competition rank on its board (see Rank.rank). In a "
        "list of a board's entries the ranks of the whole list are computed together.",
        graphql_type=int | None,
    )
    def rank(self, info: Info[Context, None]) -> int | Awaitable[int | None] | None:
        # Synchronous when the list this score came in ranked its entries already.
        rank = _rank_at_hand(self, info.context)
        if rank is not UNSETTLED:
            return cast("int | None", rank)
        return resolve_score_rank(info.context, self.item, self.window)

    @classmethod
    def of(cls, item: ScoreItem) -> Score:
        return cls(item=item)


@plain_getter("Score", "player")
def _player_at_hand(score: Score, ctx: Context) -> object:
    """The entry's player when no read is needed: the entry's copy of its name serves, or
    the list the entry came in read its player (an erased one is the resolver's error)."""
    item = score.item
    if ctx.dependencies is not None:
        ctx.depends(PlayerName(item.player_id))
    if score.names and item.player_name is not None:
        return _player_type().named(item.player_id, item.player_name)
    held, player = ctx.loaders.player.held(item.player_id)
    return _player_type().of(player) if held and player is not None else UNSETTLED


@cache
def _player_type() -> type[Player]:
    """gql.players' Player, which imports this module (imported at the first entry)."""
    from gql.players import Player

    return Player


@plain_getter("Score", "rank")
def _rank_at_hand(score: Score, _ctx: Context) -> object:
    """The entry's rank when its list ranked its entries already."""
    if score.window is not None:
        held, rank = score.window.held(score.item)
        if held:
            return rank
    return UNSETTLED


@strawberry.type(description='A position on a board, e.g. "211th of 1539".')
class Rank:
    rank: int = strawberry.field(
        description=(
            "Standard competition rank: 1 + the number of entries with a strictly better score. "
            'Tied players share a rank ("1224").'
        )
    )
    total: int = strawberry.field(description="Number of entries on the board.")
    info: strawberry.Private[RankInfo]

    @strawberry.field(description="Number of entries on the board (the same as total).")
    def entry_count(self) -> int:
        return self.total

    @strawberry.field(
        description="Share of the board's entries, in percent (0-100], that this entry beats or "
        "ties, itself included: 100 * (total - (rank - 1)) / total. The leader and everyone "
        "tied with the leader have 100."
    )
    def percentile(self) -> float:
        return 100.0 * (self.total - (self.rank - 1)) / self.total

    @strawberry.field(description="The entry ranked.", graphql_type=Score)
    def score(self, info: Info[Context, None]) -> Score | Awaitable[Score]:
        if self.info.entry is not None:
            return Score(item=self.info.entry)
        return self._load_score(info)

    async def _load_score(self, info: Info[Context, None]) -> Score:
        return Score(item=await resolve_ranked_entry(info.context, self.info))

    @classmethod
    def of(cls, rank: RankInfo | None) -> Rank | None:
        if rank is None:
            return None
        return cls(rank=rank.rank, total=rank.total, info=rank)

    @classmethod
    def all(cls, ranks: list[RankInfo]) -> list[Rank]:
        return [cls(rank=r.rank, total=r.total, info=r) for r in ranks]
