"""Mutations: inputs, payloads with typed errors, and their resolvers."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.types import Info

from dynamo.errors import LeaderboardError
from dynamo.leaderboards import Period, SortOrder
from dynamo.submit import SubmitResult
from gql.errors import UserError, user_errors
from gql.scalars import Long
from gql.types import Leaderboard, Player, Rank, Score, Session
from resolvers import leaderboards, players, submissions
from resolvers.context import Context

__all__ = ["Mutation"]


@strawberry.input(description="A new player.")
class CreatePlayerInput:
    id: strawberry.ID | None = strawberry.field(
        default=None,
        description="Id to use (1-64 of A-Z a-z 0-9 _ . -); a fresh one is generated if omitted.",
    )
    name: str = strawberry.field(description="Display name, 1-100 printable characters.")
    email: str = strawberry.field(description="Login e-mail address; one player per address.")


@strawberry.type(description="The result of createPlayer.")
class CreatePlayerPayload:
    player: Player | None = strawberry.field(description="The new player; null on error.")
    errors: list[UserError] = strawberry.field(description="Why nothing was created, if so.")


@strawberry.input(description="A new leaderboard. Its id, sort order and width never change.")
class CreateLeaderboardInput:
    id: strawberry.ID = strawberry.field(description="Board id (1-64 of A-Z a-z 0-9 _ . -).")
    name: str = strawberry.field(description="Display name.")
    period: Period = strawberry.field(description="How long the board runs.")
    sort_order: SortOrder = strawberry.field(
        default=SortOrder.DESC, description="Which scores are better."
    )
    score_width: int = strawberry.field(default=10, description="Digits a score may have, 1 to 15.")
    starts_at: datetime | None = strawberry.field(
        default=None, description="First instant scores are accepted."
    )
    ends_at: datetime | None = strawberry.field(
        default=None, description="Instant from which scores are refused."
    )


@strawberry.type(description="The result of createLeaderboard.")
class CreateLeaderboardPayload:
    leaderboard: Leaderboard | None = strawberry.field(description="The new board; null on error.")
    errors: list[UserError] = strawberry.field(description="Why nothing was created, if so.")


@strawberry.input(description="One play of a game, submitted to one board.")
class SubmitScoreInput:
    player_id: strawberry.ID = strawberry.field(description="Who played.")
    leaderboard_id: strawberry.ID = strawberry.field(description="The board to enter.")
    game_id: strawberry.ID = strawberry.field(description="The game played.")
    score: Long = strawberry.field(description="The score, 0 to 10^scoreWidth - 1 of the board.")
    duration_sec: int | None = strawberry.field(
        default=None, description="How long the play took, in seconds."
    )


@strawberry.type(description="The result of submitScore.")
class SubmitScorePayload:
    result: strawberry.Private[SubmitResult | None]
    errors: list[UserError] = strawberry.field(description="Why nothing was recorded, if so.")

    @strawberry.field(description="The session recorded for this play; null on error.")
    def session(self) -> Session | None:
        return Session(item=self.result.session) if self.result else None

    @strawberry.field(
        description="The player's entry on the board after this play: the new score if it "
        "improved the entry, the standing one otherwise; null on error."
    )
    def score(self) -> Score | None:
        return Score(item=self.result.entry) if self.result else None

    @strawberry.field(
        description="True when this play changed the board entry: the player's first score "
        "there, or a strictly better one. An equal score is not an improvement."
    )
    def improved(self) -> bool:
        return self.result.improved if self.result else False

    @strawberry.field(description="The player's rank on the board after this play.")
    async def rank(self, info: Info[Context, None]) -> Rank | None:
        if self.result is None:
            return None
        rank = await players.resolve_rank(
            info.context, self.result.entry.player_id, self.result.entry.leaderboard_id
        )
        return Rank.of(rank)


@strawberry.type(description="Writes. Each validates fully before writing anything.")
class Mutation:
    @strawberry.mutation(description="Create a player.")
    async def create_player(
        self, info: Info[Context, None], input: CreatePlayerInput
    ) -> CreatePlayerPayload:
        try:
            player = await players.create_player(
                info.context,
                str(input.id) if input.id is not None else None,
                input.name,
                input.email,
            )
        except LeaderboardError as error:
            return CreatePlayerPayload(player=None, errors=user_errors(error))
        return CreatePlayerPayload(player=Player(item=player), errors=[])

    @strawberry.mutation(description="Create a leaderboard.")
    async def create_leaderboard(
        self, info: Info[Context, None], input: CreateLeaderboardInput
    ) -> CreateLeaderboardPayload:
        try:
            board = await leaderboards.create_leaderboard(
                info.context,
                leaderboard_id=str(input.id),
                name=input.name,
                period=input.period,
                sort_order=input.sort_order,
                score_width=input.score_width,
                starts_at=input.starts_at,
                ends_at=input.ends_at,
            )
        except LeaderboardError as error:
            return CreateLeaderboardPayload(leaderboard=None, errors=user_errors(error))
        return CreateLeaderboardPayload(leaderboard=Leaderboard(item=board), errors=[])

    @strawberry.mutation(
        description="Record one play: a session, the player's statistics, and the board entry "
        "when the score improves it, all in one transaction."
    )
    async def submit_score(
        self, info: Info[Context, None], input: SubmitScoreInput
    ) -> SubmitScorePayload:
        try:
            result = await submissions.submit_score(
                info.context,
                player_id=str(input.player_id),
                leaderboard_id=str(input.leaderboard_id),
                game_id=str(input.game_id),
                score=int(input.score),
                duration_sec=input.duration_sec,
            )
        except LeaderboardError as error:
            return SubmitScorePayload(result=None, errors=user_errors(error))
        return SubmitScorePayload(result=result, errors=[])
