"""LeaderboardFamily: a periodic board definition and its boards per day, week or season."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.types import Info

from dynamo.families import FamilyItem
from gql.enums import Operator, Period, SortOrder
from gql.leaderboards import Leaderboard
from gql.rewards import RewardTier, tiers_of
from gql.scalars import Long
from resolvers import families
from resolvers.context import Context

__all__ = ["LeaderboardFamily"]


@strawberry.type(
    description="A periodic leaderboard: one board per day, ISO week or season, created by the "
    "first play of its period and expired by DynamoDB retentionDays after it ends."
)
class LeaderboardFamily:
    item: strawberry.Private[FamilyItem]
    fresh: strawberry.Private[bool] = False
    """Whether ``item`` was just written or read as it stands (its partitions need no read)."""

    @strawberry.field(
        description="The family's id; its boards are `<id>.daily.2026-11-21`, "
        "`<id>.weekly.2026-W47` or `<id>.season.3`."
    )
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.item.family_id)

    @strawberry.field(description="Display name.")
    def name(self) -> str:
        return self.item.name

    @strawberry.field(description="DAILY, WEEKLY (ISO weeks, from Monday) or SEASON.")
    def period(self) -> Period:
        return self.item.period

    @strawberry.field(description="IANA time zone in which days and weeks begin.")
    def timezone(self) -> str:
        return self.item.timezone

    @strawberry.field(description="Which scores are better on the family's boards.")
    def sort_order(self) -> SortOrder:
        return self.item.sort_order

    @strawberry.field(description="How a play changes a player's entry on the family's boards.")
    def operator(self) -> Operator:
        return self.item.operator

    @strawberry.field(description="Digits a score may have on the family's boards.")
    def score_width(self) -> int:
        return self.item.score_width

    @strawberry.field(
        description="Lowest score a play may enter on the family's boards; null when only 0 "
        "bounds it."
    )
    def min_score(self) -> Long | None:
        return Long(self.item.min_score) if self.item.min_score is not None else None

    @strawberry.field(
        description="Highest score a play may enter on the family's boards; null when only "
        "their width bounds it."
    )
    def max_score(self) -> Long | None:
        return Long(self.item.max_score) if self.item.max_score is not None else None

    @strawberry.field(description="Start of season 1 (SEASON families).")
    def season_start(self) -> datetime | None:
        return self.item.season_start

    @strawberry.field(description="Length of a season in days (SEASON families).")
    def season_days(self) -> int | None:
        return self.item.season_days

    @strawberry.field(description="Days a board stays readable after its period ends.")
    def retention_days(self) -> int:
        return self.item.retention_days

    @strawberry.field(
        description="How many days after each board's endsAt its final standings are kept; "
        "null: for ever."
    )
    def archive_days(self) -> int | None:
        return self.item.archive_days

    @strawberry.field(
        description="The reward tiers each of the family's boards takes (see "
        "Leaderboard.rewardTiers), in order; empty for none."
    )
    def reward_tiers(self) -> list[RewardTier]:
        return tiers_of(self.item.reward_tiers)

    @strawberry.field(
        description="How many partition keys the family's boards created from now on spread "
        "their entries over (a power of two from 1 to 64; see Leaderboard.partitions). "
        "updateLeaderboardFamily changes it; the boards the family has keep theirs."
    )
    async def partitions(self, info: Info[Context, None]) -> int:
        if self.fresh:
            return self.item.partitions
        return await families.resolve_family_partitions(info.context, self.item)

    @strawberry.field(
        description="The board of the current period. Before its first play it is shown "
        "as that play will create it, with no entries."
    )
    async def current(self, info: Info[Context, None]) -> Leaderboard | None:
        board = await families.resolve_family_current(info.context, self.item)
        return Leaderboard(item=board) if board else None

    @strawberry.field(
        description="The board of the period before the current one, if it had "
        "any play and has not expired."
    )
    async def previous(self, info: Info[Context, None]) -> Leaderboard | None:
        board = await families.resolve_family_previous(info.context, self.item)
        return Leaderboard(item=board) if board else None

    @strawberry.field(
        description="The board of the period containing `at`, if it had any "
        "play and has not expired."
    )
    async def board(
        self,
        info: Info[Context, None],
        at: Annotated[datetime, strawberry.argument(description="An instant of the period.")],
    ) -> Leaderboard | None:
        board = await families.resolve_family_board(info.context, self.item, at)
        return Leaderboard(item=board) if board else None
