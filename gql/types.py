"""The object types of the schema. Each wraps an item from ``dynamo`` and asks ``resolvers``
for anything it does not hold itself."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.types import Info

from dynamo.leaderboards import LeaderboardItem, Period, SortOrder
from dynamo.players import PlayerItem
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem
from gql.connections import AFTER, FIRST, Connection, connection
from gql.scalars import Long
from resolvers import leaderboards, players
from resolvers.context import Context
from resolvers.loaders import RankInfo

__all__ = ["Leaderboard", "Player", "Rank", "Score", "Session"]

strawberry.enum(
    Period,
    name="LeaderboardPeriod",
    description="How long a board runs: a day, a week, a season, or for ever.",
)
strawberry.enum(
    SortOrder,
    name="SortOrder",
    description="Which scores are better: DESC, higher is better; ASC, lower (a time) is better.",
)


@strawberry.type(description="A player: profile and lifetime statistics.")
class Player:
    item: strawberry.Private[PlayerItem]

    @strawberry.field(description="The player's id.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.item.player_id)

    @strawberry.field(description="Display name.")
    def name(self) -> str:
        return self.item.name

    @strawberry.field(description="Login e-mail address, lower-cased.")
    def email(self) -> str | None:
        return self.item.email

    @strawberry.field(description="Sum of the scores of all the player's sessions, on any board.")
    def lifetime_score(self) -> Long:
        return Long(self.item.lifetime_score)

    @strawberry.field(description="Number of sessions the player has played.")
    def games_played(self) -> int:
        return self.item.games_played

    @strawberry.field(description="When the player was created.")
    def created_at(self) -> datetime:
        return self.item.created_at

    @strawberry.field(description="When the player's profile or statistics last changed.")
    def updated_at(self) -> datetime:
        return self.item.updated_at

    @strawberry.field(description="The player's entry on a board, or null if none (AP4).")
    async def best_score(
        self, info: Info[Context, None], leaderboard_id: strawberry.ID
    ) -> Score | None:
        entry = await players.resolve_best_score(info.context, self.item.player_id, leaderboard_id)
        return Score(item=entry) if entry else None

    @strawberry.field(description="The player's entries on every board, by board id (AP5).")
    async def scores(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[Score]:
        page = await players.resolve_player_scores(info.context, self.item.player_id, first, after)
        return connection(page, Score.of)

    @strawberry.field(description="The player's sessions, newest first (AP6).")
    async def sessions(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[Session]:
        page = await players.resolve_player_sessions(
            info.context, self.item.player_id, first, after
        )
        return connection(page, Session.of)

    @strawberry.field(description="The player's rank on a board, or null if no entry (AP10).")
    async def rank(self, info: Info[Context, None], leaderboard_id: strawberry.ID) -> Rank | None:
        rank = await players.resolve_rank(info.context, self.item.player_id, leaderboard_id)
        return Rank.of(rank)

    @classmethod
    def of(cls, item: PlayerItem) -> Player:
        return cls(item=item)


@strawberry.type(description="A leaderboard: its rules and its entries.")
class Leaderboard:
    item: strawberry.Private[LeaderboardItem]

    @strawberry.field(description="The board's id.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.item.leaderboard_id)

    @strawberry.field(description="Display name.")
    def name(self) -> str:
        return self.item.name

    @strawberry.field(description="How long the board runs.")
    def period(self) -> Period:
        return self.item.period

    @strawberry.field(description="Which scores are better on this board.")
    def sort_order(self) -> SortOrder:
        return self.item.sort_order

    @strawberry.field(
        description="Digits a score may have (1 to 15): scores run from 0 to 10^scoreWidth - 1."
    )
    def score_width(self) -> int:
        return self.item.score_width

    @strawberry.field(description="First instant scores are accepted; null for no start.")
    def starts_at(self) -> datetime | None:
        return self.item.starts_at

    @strawberry.field(description="Instant from which scores are refused; null for no end.")
    def ends_at(self) -> datetime | None:
        return self.item.ends_at

    @strawberry.field(description="Number of players with an entry on this board.")
    def entry_count(self) -> int:
        return self.item.entry_count

    @strawberry.field(
        description=(
            "Entries best first (AP3). Equal scores are listed in the order they were attained."
        )
    )
    async def top_scores(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[Score]:
        page = await leaderboards.resolve_top_scores(
            info.context, self.item.leaderboard_id, first, after
        )
        return connection(page, Score.of)

    @strawberry.field(description="A player's rank on this board, or null if no entry (AP10).")
    async def rank_of(self, info: Info[Context, None], player_id: strawberry.ID) -> Rank | None:
        rank = await leaderboards.resolve_rank_of(info.context, self.item.leaderboard_id, player_id)
        return Rank.of(rank)

    @classmethod
    def of(cls, item: LeaderboardItem) -> Leaderboard:
        return cls(item=item)


@strawberry.type(description="A player's entry on a board: their best score there.")
class Score:
    item: strawberry.Private[ScoreItem]

    @strawberry.field(description="The board.")
    async def leaderboard(self, info: Info[Context, None]) -> Leaderboard:
        board = await info.context.loaders.leaderboard.load(self.item.leaderboard_id)
        if board is None:
            raise LookupError(f"leaderboard {self.item.leaderboard_id} of a score is missing")
        return Leaderboard(item=board)

    @strawberry.field(description="The player.")
    async def player(self, info: Info[Context, None]) -> Player:
        player = await info.context.loaders.player.load(self.item.player_id)
        if player is None:
            raise LookupError(f"player {self.item.player_id} of a score is missing")
        return Player(item=player)

    @strawberry.field(description="The score.")
    def score(self) -> Long:
        return Long(self.item.score)

    @strawberry.field(description="When the score was attained.")
    def attained_at(self) -> datetime:
        return self.item.attained_at

    @strawberry.field(description="The session that produced the score.")
    def session_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.item.session_id) if self.item.session_id else None

    @classmethod
    def of(cls, item: ScoreItem) -> Score:
        return cls(item=item)


@strawberry.type(description="One play of a game by a player.")
class Session:
    item: strawberry.Private[SessionItem]

    @strawberry.field(description="The session id, a ULID: sorts by time.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.item.session_id)

    @strawberry.field(description="Who played.")
    async def player(self, info: Info[Context, None]) -> Player:
        player = await info.context.loaders.player.load(self.item.player_id)
        if player is None:
            raise LookupError(f"player {self.item.player_id} of a session is missing")
        return Player(item=player)

    @strawberry.field(description="The game played.")
    def game_id(self) -> strawberry.ID:
        return strawberry.ID(self.item.game_id)

    @strawberry.field(description="The score of this play.")
    def score(self) -> Long:
        return Long(self.item.score)

    @strawberry.field(description="How long the play took, in seconds, if reported.")
    def duration_sec(self) -> int | None:
        return self.item.duration_sec

    @strawberry.field(description="When the play was recorded.")
    def played_at(self) -> datetime:
        return self.item.played_at

    @strawberry.field(description="The board the play was submitted to.")
    def leaderboard_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.item.leaderboard_id) if self.item.leaderboard_id else None

    @classmethod
    def of(cls, item: SessionItem) -> Session:
        return cls(item=item)


@strawberry.type(description='A position on a board, e.g. "211th of 1539".')
class Rank:
    rank: int = strawberry.field(
        description=(
            "Standard competition rank: 1 + the number of entries with a strictly better score. "
            'Tied players share a rank ("1224").'
        )
    )
    total: int = strawberry.field(description="Number of entries on the board.")
    item: strawberry.Private[ScoreItem]

    @strawberry.field(description="The entry ranked.")
    def score(self) -> Score:
        return Score(item=self.item)

    @classmethod
    def of(cls, rank: RankInfo | None) -> Rank | None:
        if rank is None:
            return None
        return cls(rank=rank.rank, total=rank.total, item=rank.entry)
