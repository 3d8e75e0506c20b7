"""Leaderboard: a board's rules, its entries best first, ranks and around-me windows."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.types import Info

from dynamo.leaderboards import LeaderboardItem
from gql.connections import AFTER, FIRST, Connection, connection
from gql.enums import BoardStatus, Operator, Period, SortOrder
from gql.lookahead import selected
from gql.results import FinalResult
from gql.rewards import TIERS, RewardTier, tiers_of
from gql.scalars import Long
from gql.scores import NAME_FIELDS, Rank, Score
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
        description="Where the board stands: LIVE until its endsAt, CLOSING from then until "
        "its final standings are written, FINAL after."
    )
    def status(self, info: Info[Context, None]) -> BoardStatus:
        return self.item.status(info.context.clock())

    @strawberry.field(
        description="When the board's final standings were complete; null until it is FINAL."
    )
    def closed_at(self) -> datetime | None:
        return self.item.closed_at

    @strawberry.field(
        description="How many days after its endsAt the board's final standings are kept; "
        "null: for ever."
    )
    def archive_days(self) -> int | None:
        return self.item.archive_days

    @strawberry.field(description=TIERS)
    def reward_tiers(self) -> list[RewardTier]:
        return tiers_of(self.item.reward_tiers)

    @strawberry.field(
        description="How many partition keys the board's entries spread over (1 to 64, fixed "
        "when the board is created): its write capacity is that many partitions'. Its pages, "
        "ranks and windows are the same whatever it is."
    )
    def partitions(self) -> int:
        return self.item.partitions

    @strawberry.field(
        description="Number of players with an entry on this board; on a FINAL board, the "
        "entrants of its final standings (as its close counted them).",
        graphql_type=int,
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
        description="Entries best first (AP3). Equal scores are listed in the order they were "
        "attained. On a FINAL board: its final standings (as finalStandings, in the same order, "
        "each entry as it was frozen and ranked as its result), with that list's cursors; they "
        "stay readable after the live entries expire (retentionDays), as long as the final "
        "standings are kept (archiveDays)."
    )
    async def top_scores(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[Score]:
        wanted = selected(info, "edges", "node")
        names = "player" in wanted and selected(info, "edges", "node", "player") <= NAME_FIELDS
        page, window = await leaderboards.resolve_top_scores(
            info.context,
            self.item,
            first,
            after,
            with_players="player" in wanted,
            with_ranks="rank" in wanted,
            names=names,
        )
        return connection(page, lambda item: Score(item=item, window=window, names=names))

    @strawberry.field(
        description="The board's final standings in its order (position 1 first), each "
        "entrant once; empty until the board is FINAL. They never change, except that a player "
        "erased since is left out (the others keep the positions, ranks and total the close "
        "gave them)."
    )
    async def final_standings(
        self,
        info: Info[Context, None],
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = None,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = None,
    ) -> Connection[FinalResult]:
        page = await leaderboards.resolve_final_standings(
            info.context,
            self.item,
            first,
            after,
            with_players="player" in selected(info, "edges", "node"),
        )
        return connection(page, FinalResult.of)

    @strawberry.field(
        description="A player's final result on this board; null until the board is FINAL, "
        "and for a player that had no entry on it."
    )
    async def final_result(
        self, info: Info[Context, None], player_id: Annotated[strawberry.ID, PLAYER]
    ) -> FinalResult | None:
        found = await leaderboards.resolve_final_result(info.context, self.item, player_id)
        return FinalResult(item=found) if found else None

    @strawberry.field(
        description="A player's rank on this board, or null if no entry (AP10). On a FINAL "
        "board: the rank and total of the player's final result, null for a player with none."
    )
    async def rank_of(
        self, info: Info[Context, None], player_id: Annotated[strawberry.ID, PLAYER]
    ) -> Rank | None:
        rank = await leaderboards.resolve_rank_of(info.context, self.item, player_id)
        return Rank.of(rank)

    @strawberry.field(
        description="The entries of the given players (at most 100; a friends board), best "
        "first, each with its rank on the whole board. Players without an entry are left out. "
        "On a FINAL board: their final results' ranks and total."
    )
    async def ranks_of(
        self,
        info: Info[Context, None],
        player_ids: Annotated[
            list[strawberry.ID], strawberry.argument(description="The players, at most 100.")
        ],
    ) -> list[Rank]:
        found = await leaderboards.resolve_ranks_of(
            info.context, self.item, [str(p) for p in player_ids]
        )
        return Rank.all(found)

    @strawberry.field(
        description="The player's entry with up to `before` better and `after` worse entries "
        "around it, best first, each with its rank; null when the player has no entry. On a "
        "FINAL board: the player's final result with up to `before` results listed before it "
        "and `after` listed after it in the final standings, each with its result's rank and "
        "total; null for a player with no result."
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
            self.item,
            player_id,
            before,
            after,
            with_players="player" in selected(info, "score"),
        )
        return Rank.all(found) if found is not None else None

    @classmethod
    def of(cls, item: LeaderboardItem) -> Leaderboard:
        return cls(item=item)
