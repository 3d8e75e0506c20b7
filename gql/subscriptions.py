"""Subscriptions, over the graphql-transport-ws protocol."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Annotated

import strawberry
from strawberry.types import Info

from dynamo.errors import LeaderboardError
from gql.errors import coded
from gql.leaderboards import Leaderboard
from gql.scores import Score
from resolvers import live
from resolvers.context import Context
from resolvers.live import Push
from resolvers.ranks import WindowRanks

__all__ = ["LeaderboardTop", "Subscription"]


@strawberry.type(description="The top entries of a board at one moment.")
class LeaderboardTop:
    leaderboard_id: strawberry.ID = strawberry.field(description="The board.")
    entries: list[Score] = strawberry.field(
        description="Its top entries, best first, ranked; on a FINAL board, the first of its "
        "final standings, ranked as their results."
    )
    leaderboard: Leaderboard = strawberry.field(
        description="The board as this push read it: its status is FINAL on the last push of "
        "a board whose close is complete."
    )


@strawberry.type(description="Live updates, over WebSocket (graphql-transport-ws).")
class Subscription:
    @strawberry.subscription(
        description="The board's top `first` entries (default 10, at most 100): once when "
        "subscribing, then each time a play changes them. Plays that do not change the top "
        "send nothing. When the board's close is complete (status FINAL), one last push shows "
        "it FINAL with the top of its final standings, and the subscription completes; "
        "subscribing to a FINAL board sends that one push and completes."
    )
    async def leaderboard_changed(
        self,
        info: Info[Context, None],
        leaderboard_id: Annotated[strawberry.ID, strawberry.argument(description="The board.")],
        first: Annotated[
            int | None, strawberry.argument(description="How many top entries, 1 to 100.")
        ] = 10,
    ) -> AsyncGenerator[LeaderboardTop, None]:
        board_id = str(leaderboard_id)
        try:
            async for top in live.watch_top(info.context, board_id, first):
                yield LeaderboardTop(
                    leaderboard_id=leaderboard_id,
                    entries=await _ranked(info, board_id, top),
                    leaderboard=Leaderboard(item=top.board),
                )
        except LeaderboardError as error:
            # Errors of a running stream do not pass the schema's error hook.
            raise coded(error) from None


async def _ranked(info: Info[Context, None], board_id: str, top: Push) -> list[Score]:
    """The push's entries, their ranks computed already: a run from the top is ranked from
    its own scores, without a call, and with the ranks and the players' names at hand the
    entries are completed plainly (gql/execution.py), without an awaitable. So a socket
    closing mid-push cannot leave 100 entries' coroutines never awaited, as cancelling
    graphql-core's execution between its creating them and their first step does."""
    window = WindowRanks(info.context, board_id, top.entries, from_top=True, known=top.ranks)
    if top.entries:
        await window.compute()
    return [Score(item=item, window=window) for item in top.entries]
