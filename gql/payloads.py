"""Mutation payloads: the result, and the typed errors that explain its absence."""

from __future__ import annotations

import strawberry
from strawberry.types import Info

from dynamo.plays import BoardResult, PlayResult
from gql.errors import UserError
from gql.families import LeaderboardFamily
from gql.leaderboards import Leaderboard
from gql.players import Player
from gql.scores import Rank, Score
from gql.sessions import Session
from resolvers import players
from resolvers.context import Context

__all__ = [
    "BoardEntryResult",
    "CreateLeaderboardFamilyPayload",
    "CreateLeaderboardPayload",
    "CreatePlayerPayload",
    "SubmitScorePayload",
    "UpdateLeaderboardFamilyPayload",
]

ERRORS = "Why nothing was written, if so."


@strawberry.type(description="The result of createPlayer.")
class CreatePlayerPayload:
    player: Player | None = strawberry.field(description="The new player; null on error.")
    errors: list[UserError] = strawberry.field(description=ERRORS)


@strawberry.type(description="The result of renamePlayer.")
class RenamePlayerPayload:
    player: Player | None = strawberry.field(
        description="The player with its new name; null on error."
    )
    complete: bool = strawberry.field(
        description="Whether every entry of the player shows the new name. False when this "
        "call stopped within its request's budget (a player on very many boards): send it "
        "again, and it goes on from where it stopped."
    )
    errors: list[UserError] = strawberry.field(description=ERRORS)


@strawberry.type(description="The result of createLeaderboard.")
class CreateLeaderboardPayload:
    leaderboard: Leaderboard | None = strawberry.field(description="The new board; null on error.")
    errors: list[UserError] = strawberry.field(description=ERRORS)


@strawberry.type(description="The result of createLeaderboardFamily.")
class CreateLeaderboardFamilyPayload:
    family: LeaderboardFamily | None = strawberry.field(
        description="The new family; null on error."
    )
    errors: list[UserError] = strawberry.field(description=ERRORS)


@strawberry.type(description="The result of updateLeaderboardFamily.")
class UpdateLeaderboardFamilyPayload:
    family: LeaderboardFamily | None = strawberry.field(
        description="The family as changed; null on error."
    )
    errors: list[UserError] = strawberry.field(description=ERRORS)


async def _rank(info: Info[Context, None], board: BoardResult) -> Rank | None:
    rank = await players.resolve_rank(
        info.context, board.entry.player_id, board.entry.leaderboard_id
    )
    return Rank.of(rank)


@strawberry.type(description="What a play did on one board.")
class BoardEntryResult:
    result: strawberry.Private[BoardResult]

    @strawberry.field(description="The board's id.")
    def leaderboard_id(self) -> strawberry.ID:
        return strawberry.ID(self.result.leaderboard_id)

    @strawberry.field(description="The board.")
    async def leaderboard(self, info: Info[Context, None]) -> Leaderboard | None:
        board = await info.context.loaders.leaderboard.load(self.result.leaderboard_id)
        return Leaderboard(item=board) if board else None

    @strawberry.field(description="The player's entry on the board after the play.")
    def score(self) -> Score:
        return Score(item=self.result.entry)

    @strawberry.field(
        description="True when the play changed the entry: a first entry, a strictly better "
        "score (BEST), any play (LATEST), a non-zero amount (INCREMENT)."
    )
    def improved(self) -> bool:
        return self.result.improved

    @strawberry.field(description="The player's rank on the board now.")
    async def rank(self, info: Info[Context, None]) -> Rank | None:
        return await _rank(info, self.result)


@strawberry.type(description="The result of submitScore.")
class SubmitScorePayload:
    result: strawberry.Private[PlayResult | None]
    errors: list[UserError] = strawberry.field(description=ERRORS)

    @property
    def _first(self) -> BoardResult | None:
        return self.result.boards[0] if self.result else None

    @strawberry.field(description="The session recorded for this play; null on error.")
    def session(self) -> Session | None:
        return Session(item=self.result.session) if self.result else None

    @strawberry.field(
        description="The player's entry on the first board after this play: the new score if "
        "it changed the entry, the standing one otherwise; null on error."
    )
    def score(self) -> Score | None:
        return Score(item=self._first.entry) if self._first else None

    @strawberry.field(
        description="True when this play changed the entry on the first board: the player's "
        "first score there, or a strictly better one (BEST; an equal score is not). See "
        "BoardEntryResult.improved for the other operators."
    )
    def improved(self) -> bool:
        return self._first.improved if self._first else False

    @strawberry.field(description="The player's rank on the first board after this play.")
    async def rank(self, info: Info[Context, None]) -> Rank | None:
        return await _rank(info, self._first) if self._first else None

    @strawberry.field(description="What the play did on each board, in the order named.")
    def entries(self) -> list[BoardEntryResult]:
        return [BoardEntryResult(result=b) for b in self.result.boards] if self.result else []

    @strawberry.field(
        description="True when this submissionId was already recorded: nothing new was written "
        "and this is the first submission's result."
    )
    def duplicate(self) -> bool:
        return self.result.duplicate if self.result else False
