"""Session: one play of a game by a player."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.types import Info

from dynamo.sessions import SessionItem
from gql.scalars import JSON, Long
from resolvers.context import Context
from resolvers.erased import erased_meanwhile

if TYPE_CHECKING:
    from gql.players import Player

__all__ = ["Session"]


@strawberry.type(description="One play of a game by a player.")
class Session:
    item: strawberry.Private[SessionItem]

    @strawberry.field(description="The session id, a ULID: sorts by time.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.item.session_id)

    @strawberry.field(description="Who played.")
    async def player(
        self, info: Info[Context, None]
    ) -> Annotated[Player, strawberry.lazy("gql.players")]:
        from gql.players import Player

        player = await info.context.loaders.player.load(self.item.player_id)
        if player is None:
            raise erased_meanwhile(self.item.player_id)
        return Player.of(player)

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

    @strawberry.field(description="The first board the play was submitted to.")
    def leaderboard_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.item.leaderboard_id) if self.item.leaderboard_id else None

    @strawberry.field(description="Every board the play was submitted to.")
    def leaderboard_ids(self) -> list[strawberry.ID]:
        ids = self.item.leaderboard_ids or (
            [self.item.leaderboard_id] if self.item.leaderboard_id else []
        )
        return [strawberry.ID(i) for i in ids]

    @strawberry.field(description="The client's submissionId, when the play was sent with one.")
    def submission_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.item.submission_id) if self.item.submission_id else None

    @strawberry.field(
        description="The play's metadata (SubmitScoreInput.metadata), null when it had none."
    )
    def metadata(self) -> JSON | None:
        return JSON(self.item.metadata) if self.item.metadata is not None else None

    @classmethod
    def of(cls, item: SessionItem) -> Session:
        return cls(item=item)
