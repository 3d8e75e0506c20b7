"""The schema's roots: its queries, with its mutations and subscriptions, and the error handling
every operation goes through. The service's schema, with the extensions that check, cost and
answer documents, is built by the edge (edge/schema.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated

import strawberry
from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types import ExecutionContext, Info

from gql.connections import AFTER, FIRST, Connection, connection
from gql.errors import log_unexpected
from gql.execution import PlainExecutionContext
from gql.families import LeaderboardFamily
from gql.leaderboards import Leaderboard
from gql.lookahead import selected
from gql.moderation import ModerationAction
from gql.mutations import Mutation
from gql.players import Player, asked_ranks
from gql.results import FinalResult
from gql.scalars import SCALARS
from gql.sessions import Session
from gql.subscriptions import Subscription
from resolvers import claims, families, leaderboards, moderation, players, sessions
from resolvers.auth import require_authenticated
from resolvers.context import Context

ID_ARG = strawberry.argument(description="The id.")

__all__ = ["LeaderboardSchema", "Query", "build_schema"]


@strawberry.type(description="Reads. Unknown ids read as null; malformed ids are errors.")
class Query:
    @strawberry.field(description="A player by id (AP1).")
    async def player(
        self, info: Info[Context, None], id: Annotated[strawberry.ID, ID_ARG]
    ) -> Player | None:
        found = await players.resolve_player(info.context, id, asked_ranks(info))
        return Player.of(found) if found else None

    @strawberry.field(
        description="Players by id (at most 100), in the order asked, null where unknown: one "
        "batched read."
    )
    async def players(
        self,
        info: Info[Context, None],
        ids: Annotated[list[strawberry.ID], strawberry.argument(description="At most 100 ids.")],
    ) -> list[Player | None]:
        found = await players.resolve_players(info.context, [str(i) for i in ids])
        return [Player.of(p) if p else None for p in found]

    @strawberry.field(
        description="A player by login e-mail, case-insensitive (AP2). Private: needs an API key."
    )
    async def player_by_email(
        self,
        info: Info[Context, None],
        email: Annotated[str, strawberry.argument(description="Login e-mail address.")],
    ) -> Player | None:
        require_authenticated(info.context)
        item = await players.resolve_player_by_email(info.context, email)
        return Player.of(item) if item else None

    @strawberry.field(description="A leaderboard by id (AP9).")
    async def leaderboard(
        self, info: Info[Context, None], id: Annotated[strawberry.ID, ID_ARG]
    ) -> Leaderboard | None:
        item = await leaderboards.resolve_leaderboard(info.context, id)
        return Leaderboard(item=item) if item else None

    @strawberry.field(description="A periodic leaderboard family by id.")
    async def leaderboard_family(
        self, info: Info[Context, None], id: Annotated[strawberry.ID, ID_ARG]
    ) -> LeaderboardFamily | None:
        item = await families.resolve_family(info.context, id)
        return LeaderboardFamily(item=item) if item else None

    @strawberry.field(description="One session by its player and id (AP8).")
    async def session(
        self,
        info: Info[Context, None],
        player_id: Annotated[strawberry.ID, strawberry.argument(description="Who played.")],
        session_id: Annotated[
            strawberry.ID, strawberry.argument(description="The session's id, a ULID.")
        ],
    ) -> Session | None:
        item = await sessions.resolve_session(info.context, player_id, session_id)
        return Session(item=item) if item else None

    @strawberry.field(description="Every player's sessions of one game, newest first (AP7).")
    async def game_sessions(
        self,
        info: Info[Context, None],
        game_id: Annotated[strawberry.ID, strawberry.argument(description="The game.")],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[Session]:
        page = await sessions.resolve_game_sessions(
            info.context,
            game_id,
            first,
            after,
            with_players="player" in selected(info, "edges", "node"),
        )
        return connection(page, Session.of)

    @strawberry.field(
        description="Every final result, board after board in the order the boards closed "
        "(their closedAt), each board's in its final standings' order: for a game server that "
        "pulls the results and their rewards, and resumes where it stopped (needs an API key: "
        "a game-server or an admin key). A board appears 10 s after its close (by when every "
        "one of its results is readable), and a cursor resumes exactly after its result, "
        "across boards: the endCursor of a page that reached the feed's end goes on with the "
        "boards closed since. Boards closed with no entrant have no result and are passed "
        "over."
    )
    async def result_feed(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[FinalResult]:
        page = await claims.resolve_result_feed(info.context, first, after)
        return connection(page, FinalResult.of)

    @strawberry.field(
        description="Every moderation action, newest first; only one board's or one "
        "player's (or one player's on one board) when named. Needs an admin key."
    )
    async def moderation_log(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
        leaderboard_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="Only this board's actions.")
        ] = None,
        player_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="Only this player's actions.")
        ] = None,
    ) -> Connection[ModerationAction]:
        page = await moderation.resolve_moderation_log(
            info.context,
            first,
            after,
            str(leaderboard_id) if leaderboard_id is not None else None,
            str(player_id) if player_id is not None else None,
        )
        return connection(page, ModerationAction.of)


class LeaderboardSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        context = execution_context.context if execution_context else None
        log_unexpected(errors, context.request_id if isinstance(context, Context) else "")


def build_schema(
    extensions: Iterable[type[SchemaExtension] | Callable[[], SchemaExtension]],
    *,
    execution_context_class: type[StrawberryGraphQLCoreExecutionContext] | None = (
        PlainExecutionContext
    ),
) -> LeaderboardSchema:
    """The schema of these roots and scalars, with Strawberry's ``extensions`` in the order
    given (the edge's, see edge/schema.py), executed by ``execution_context_class``: by default
    one that completes plain objects without graphql-core's per-field machinery, with the same
    answers (gql/execution.py); None: graphql-core's (as Strawberry runs it)."""
    return LeaderboardSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=extensions,
        config=StrawberryConfig(scalar_map=SCALARS),
        execution_context_class=execution_context_class,
    )
