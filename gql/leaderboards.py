"""Leaderboard: a board's rules, its entries best first, ranks and around-me windows."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.types import Info

from dynamo.leaderboards import LeaderboardItem
from gql.connections import AFTER, FIRST, Connection, connection
from gql.enums import Operator, Period, SortOrder
from gql.lookahead import selected
from gql.scalars import Long
from gql.scores import Rank, Score
from resolvers import families, leaderboards
from resolvers.context import Context

if TYPE_CHECKING:
    from gql.families import LeaderboardFamily

__all__ = ["Leaderboard"]

AROUND = "How many entries to include {} the player's, 0 to 50."
PLAYER = strawberry.argument(description="The player's id.")


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

    @strawberry.field(description="How a play changes a player's entry on this board.")
    def operator(self) -> Operator:
        return self.item.operator

    @strawberry.field(
        description="Digits a score may have (1 to 15): scores run from 0 to 10^scoreWidth - 1."
    )
    def score_width(self) -> int:
        return self.item.score_width

    @strawberry.field(
        description="Lowest score a play may enter on this board; null when only 0 bounds it. "
        "On INCREMENT boards it bounds each play's amount, not the total."
    )
    def min_score(self) -> Long | None:
        return Long(self.item.min_score) if self.item.min_score is not None else None

    @strawberry.field(
        description="Highest score a play may enter on this board; null when only its width "
        "bounds it. On INCREMENT boards it bounds each play's amount, not the total."
    )
    def max_score(self) -> Long | None:
        return Long(self.item.max_score) if self.item.max_score is not None else None

    @strawberry.field(description="First instant scores are accepted; null for no start.")
    def starts_at(self) -> datetime | None:
        return self.item.starts_at

    @strawberry.field(description="Instant from which scores are refused; null for no end.")
    def ends_at(self) -> datetime | None:
        return self.item.ends_at

    @strawberry.field(
        description="How many partition keys the board's entries spread over (1 to 64, fixed "
        "when the board is created): its write capacity is that many partitions'. Its pages, "
        "ranks and windows are the same whatever it is."
    )
    def partitions(self) -> int:
        return self.item.partitions

    @strawberry.field(
        description="Number of players with an entry on this board.", graphql_type=int
    )
    def entry_count(self, info: Info[Context, None]) -> int | Awaitable[int]:
        # Synchronous when the board's read brought its count (a board of one partition).
        return leaderboards.resolve_entry_count(info.context, self.item)

    @strawberry.field(
        description="When DynamoDB may delete this board and its entries (periodic boards)."
    )
    def expires_at(self) -> datetime | None:
        return datetime.fromtimestamp(self.item.ttl, UTC) if self.item.ttl is not None else None

    @strawberry.field(description="The family this board is one period of, if any.")
    async def family(
        self, info: Info[Context, None]
    ) -> Annotated[LeaderboardFamily, strawberry.lazy("gql.families")] | None:
        from gql.families import LeaderboardFamily

        if self.item.family_id is None:
            return None
        family = await families.resolve_family(info.context, self.item.family_id)
        return LeaderboardFamily(item=family) if family else None

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
        wanted = selected(info, "edges", "node")
        page, window = await leaderboards.resolve_top_scores(
            info.context,
            self.item,
            first,
            after,
            with_players="player" in wanted,
            with_ranks="rank" in wanted,
        )
        return connection(page, lambda item: Score(item=item, window=window))

    @strawberry.field(description="A player's rank on this board, or null if no entry (AP10).")
    async def rank_of(
        self, info: Info[Context, None], player_id: Annotated[strawberry.ID, PLAYER]
    ) -> Rank | None:
        rank = await leaderboards.resolve_rank_of(info.context, self.item.leaderboard_id, player_id)
        return Rank.of(rank)

    @strawberry.field(
        description="The entries of the given players (at most 100; a friends board), best "
        "first, each with its rank on the whole board. Players without an entry are left out."
    )
    async def ranks_of(
        self,
        info: Info[Context, None],
        player_ids: Annotated[
            list[strawberry.ID], strawberry.argument(description="The players, at most 100.")
        ],
    ) -> list[Rank]:
        found = await leaderboards.resolve_ranks_of(
            info.context, self.item.leaderboard_id, [str(p) for p in player_ids]
        )
        return Rank.all(found)

    @strawberry.field(
        description="The player's entry with up to `before` better and `after` worse entries "
        "around it, best first, each with its rank; null when the player has no entry."
    )
    async def around(
        self,
        info: Info[Context, None],
        player_id: Annotated[strawberry.ID, PLAYER],
        before: Annotated[int, strawberry.argument(description=AROUND.format("above"))] = 5,
        after: Annotated[int, strawberry.argument(description=AROUND.format("below"))] = 5,
    ) -> list[Rank] | None:
        found = await leaderboards.resolve_around(
            info.context,
            self.item.leaderboard_id,
            player_id,
            before,
            after,
            with_players="player" in selected(info, "score"),
        )
        return Rank.all(found) if found is not None else None

    @classmethod
    def of(cls, item: LeaderboardItem) -> Leaderboard:
        return cls(item=item)
