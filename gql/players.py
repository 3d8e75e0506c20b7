"""Player: profile, lifetime statistics, and the player's boards, sessions and ranks."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from dynamo.players import MAX_GAMES_PLAYED, PlayerItem
from gql.connections import AFTER, FIRST, Connection, connection
from gql.lookahead import selected_fields
from gql.results import FinalResult
from gql.scalars import MAX_LONG, Long
from gql.scores import Rank, Score
from gql.sessions import Session
from resolvers import players
from resolvers.context import Context
from resolvers.players import AskedRanks, Entrant

__all__ = ["Player", "PlayerModeration", "asked_ranks"]

BOARD = strawberry.argument(description="The board's id.")

_RANK_FIELDS = frozenset({"id", "__typename", "rank", "ranks"})
"""The fields a player can be resolved for without reading its item."""


def asked_ranks(info: Info[Any, Any]) -> AskedRanks:
    """The boards of the ``rank(leaderboardId:)`` and ``ranks(leaderboardIds:)`` fields selected
    below the current field, and whether they and ``id`` are all that is asked."""
    fields = selected_fields(info)
    boards: list[str] = []
    for field in fields:
        if field.name == "rank":
            asked = [field.arguments.get("leaderboardId")]
        elif field.name == "ranks":
            asked = field.arguments.get("leaderboardIds") or []
        else:
            continue
        boards += [b for b in asked if isinstance(b, str)]
    return AskedRanks(boards=tuple(boards), only=all(f.name in _RANK_FIELDS for f in fields))


@strawberry.type(description="A player's standing with the operators.")
class PlayerModeration:
    banned: bool = strawberry.field(description="Whether a ban is in force.")
    banned_at: datetime | None = strawberry.field(description="Since when, if banned.")
    reason: str | None = strawberry.field(description="Why, as the operator gave it, if banned.")


@strawberry.type(description="A player: profile and lifetime statistics.")
class Player:
    player_id: strawberry.Private[str]
    item: strawberry.Private[PlayerItem | None]
    """None for a player known to exist whose item was not read (an :class:`Entrant`, or the
    player of an entry that holds its name): then only its id, ranks and ``known_name`` are
    selected."""
    known_name: strawberry.Private[str | None] = None
    """The name an entry holds of its player, when its item was not read."""

    @strawberry.field(description="The player's id.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.player_id)

    @strawberry.field(description="Display name.")
    def name(self) -> str:
        if self.item is None and self.known_name is not None:
            return self.known_name
        return self._profile().name

    @strawberry.field(
        description="Login e-mail address, normalised (NFKC, invisible characters removed, "
        "local part case-folded, domain in IDNA form). Private: null unless the request "
        "carries an API key."
    )
    def email(self, info: Info[Context, None]) -> str | None:
        return self._profile().email if info.context.authenticated else None

    @strawberry.field(
        description="Whether the player is banned, since when and why. Readable with an admin "
        "key only: null otherwise."
    )
    def moderation(self, info: Info[Context, None]) -> PlayerModeration | None:
        if not info.context.admin:
            return None
        profile = self._profile()
        return PlayerModeration(
            banned=profile.banned, banned_at=profile.banned_at, reason=profile.ban_reason
        )

    @strawberry.field(description="Sum of the scores of all the player's sessions, on any board.")
    def lifetime_score(self) -> Long:
        # Plays cannot take the sum past MAX_LONG; a sum stored past it before that rule
        # existed reads as MAX_LONG rather than failing the player (and its whole page).
        return Long(min(self._profile().lifetime_score, MAX_LONG))

    @strawberry.field(description="Number of sessions the player has played.")
    def games_played(self) -> int:
        return min(self._profile().games_played, MAX_GAMES_PLAYED)

    @strawberry.field(description="When the player was created.")
    def created_at(self) -> datetime:
        return self._profile().created_at

    @strawberry.field(description="When the player's profile or statistics last changed.")
    def updated_at(self) -> datetime:
        return self._profile().updated_at

    @strawberry.field(
        description="The player's entry on a board, or null if none (AP4): its best score on "
        "a BEST board, its latest on a LATEST board, its total on an INCREMENT board."
    )
    async def entry(
        self, info: Info[Context, None], leaderboard_id: Annotated[strawberry.ID, BOARD]
    ) -> Score | None:
        found = await players.resolve_entry(info.context, self.player_id, leaderboard_id)
        return Score(item=found) if found else None

    @strawberry.field(
        description="The player's entry on a board, or null if none (AP4).",
        deprecation_reason="Use entry(leaderboardId): on LATEST and INCREMENT boards the entry "
        "is not a best score. bestScore is removed in the next breaking release.",
    )
    async def best_score(
        self, info: Info[Context, None], leaderboard_id: Annotated[strawberry.ID, BOARD]
    ) -> Score | None:
        found = await players.resolve_entry(info.context, self.player_id, leaderboard_id)
        return Score(item=found) if found else None

    @strawberry.field(description="The player's entries on every board, by board id (AP5).")
    async def scores(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[Score]:
        page = await players.resolve_player_scores(info.context, self.player_id, first, after)
        return connection(page, Score.of)

    @strawberry.field(
        description="The player's final results on the boards whose close is complete, the "
        "newest period (the latest endsAt) first."
    )
    async def results(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[FinalResult]:
        page = await players.resolve_player_results(info.context, self.player_id, first, after)
        return connection(page, FinalResult.of)

    @strawberry.field(description="The player's sessions, newest first (AP6).")
    async def sessions(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[Session]:
        page = await players.resolve_player_sessions(info.context, self.player_id, first, after)
        return connection(page, Session.of)

    @strawberry.field(
        description="The player's rank on a board, or null if no entry (AP10). On a FINAL "
        "board: the rank and total of the player's final result, null for a player with none "
        "(where the rank index still holds the board's frozen entries, it answers the same, "
        "but for the players erased since the close)."
    )
    async def rank(
        self, info: Info[Context, None], leaderboard_id: Annotated[strawberry.ID, BOARD]
    ) -> Rank | None:
        rank = await players.resolve_rank(info.context, self.player_id, leaderboard_id)
        return Rank.of(rank)

    @strawberry.field(
        description="The player's rank on each of several boards (at most 100), in the order "
        "asked, null where the player has no entry. The lookups run concurrently. A FINAL "
        "board's is as Player.rank's."
    )
    async def ranks(
        self,
        info: Info[Context, None],
        leaderboard_ids: Annotated[
            list[strawberry.ID], strawberry.argument(description="The boards, at most 100.")
        ],
    ) -> list[Rank | None]:
        found = await players.resolve_ranks(
            info.context, self.player_id, [str(i) for i in leaderboard_ids]
        )
        return [Rank.of(r) for r in found]

    def _profile(self) -> PlayerItem:
        if self.item is None:
            raise LookupError(f"player {self.player_id}: a profile field of a player not read")
        return self.item

    @classmethod
    def named(cls, player_id: str, name: str) -> Player:
        """The player of an entry, known by the name the entry holds, its item not read."""
        return cls(player_id=player_id, item=None, known_name=name)

    @classmethod
    def of(cls, found: PlayerItem | Entrant) -> Player:
        """A player read from the table, or one known to exist without its item."""
        return cls(player_id=found.player_id, item=found if isinstance(found, PlayerItem) else None)
