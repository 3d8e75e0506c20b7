"""Resolve functions for leaderboard families and their periodic boards."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from dynamo import families
from dynamo.errors import Subject
from dynamo.families import FamilyItem, concrete_board, period_window
from dynamo.leaderboards import LeaderboardItem, Operator, Period, SortOrder
from resolvers.context import Context
from resolvers.inputs import (
    TierArguments,
    check_new_family,
    check_partitions,
    clean_id,
    clean_instant,
    clean_name,
    clean_reward_tiers,
    naming,
)

__all__ = [
    "create_family",
    "resolve_family",
    "resolve_family_board",
    "resolve_family_current",
    "resolve_family_partitions",
    "resolve_family_previous",
    "update_family",
]


async def resolve_family(ctx: Context, family_id: str) -> FamilyItem | None:
    return (await families.get_families(ctx.db, [clean_id(family_id, "id")]))[0]


async def resolve_family_board(
    ctx: Context, family: FamilyItem, at: datetime
) -> LeaderboardItem | None:
    """The family's board of the period containing ``at``; None if that period had no play
    (or its board has expired)."""
    window = period_window(family, clean_instant(at, "at"))
    if window is None:
        return None
    return _owned(family, await ctx.loaders.leaderboard.load(window.leaderboard_id))


def _owned(family: FamilyItem, board: LeaderboardItem | None) -> LeaderboardItem | None:
    """A stored board at a family board's id, if it is the family's own (not one created by
    hand before those ids were reserved)."""
    return board if board is not None and board.family_id == family.family_id else None


async def resolve_family_current(ctx: Context, family: FamilyItem) -> LeaderboardItem | None:
    """The board of the current period, as stored, or as its first play will create it."""
    at = ctx.clock()
    window = period_window(family, at)
    if window is None:
        return None
    stored = _owned(family, await ctx.loaders.leaderboard.load(window.leaderboard_id))
    return stored or concrete_board(family, window, at)


async def resolve_family_previous(ctx: Context, family: FamilyItem) -> LeaderboardItem | None:
    window = period_window(family, ctx.clock())
    if window is None:
        return None
    return await resolve_family_board(ctx, family, window.starts_at - timedelta(milliseconds=1))


async def create_family(
    ctx: Context,
    *,
    family_id: str,
    name: str,
    period: Period,
    timezone: str,
    sort_order: SortOrder,
    operator: Operator,
    score_width: int,
    season_start: datetime | None,
    season_days: int | None,
    retention_days: int,
    min_score: int | None = None,
    max_score: int | None = None,
    partitions: int = 1,
    archive_days: int | None = None,
    reward_tiers: Sequence[TierArguments] | None = None,
) -> FamilyItem:
    family = FamilyItem(
        family_id=clean_id(family_id, "id"),
        name=clean_name(name),
        period=period,
        timezone=timezone,
        sort_order=sort_order,
        operator=operator,
        score_width=score_width,
        min_score=min_score,
        max_score=max_score,
        season_start=clean_instant(season_start, "seasonStart") if season_start else None,
        season_days=season_days,
        retention_days=retention_days,
        archive_days=archive_days,
        partitions=partitions,
        created_at=ctx.clock(),
    )
    check_new_family(family)
    tiers = clean_reward_tiers(reward_tiers, family.score_width)
    if tiers is not None:
        family = family.model_copy(update={"reward_tiers": tiers})
    with naming({Subject.FAMILY: "id"}):
        return await families.create_family(ctx.db, family)


async def update_family(ctx: Context, *, family_id: str, partitions: int) -> FamilyItem:
    """Change the partitions of the family's boards created from now on (the boards it has
    keep theirs)."""
    clean = clean_id(family_id, "id")
    check_partitions(partitions)
    with naming({Subject.FAMILY: "id"}):
        return await families.set_family_partitions(ctx.db, clean, partitions)


async def resolve_family_partitions(ctx: Context, family: FamilyItem) -> int:
    """The family's partitions as they stand (the definition a process holds may be older)."""
    current = await families.read_family(ctx.db, family.family_id)
    return (current or family).partitions
