"""Resolve functions for boards: metadata, top scores, ranks, and creation."""

from __future__ import annotations

from datetime import datetime

from dynamo import leaderboards, scores
from dynamo.ids import validate_id, validate_name
from dynamo.leaderboards import LeaderboardItem, Period, SortOrder
from dynamo.scores import ScoreItem
from dynamo.table import Page, now
from resolvers.context import Context
from resolvers.loaders import RankInfo
from resolvers.pagination import page_size

__all__ = ["create_leaderboard", "resolve_leaderboard", "resolve_rank_of", "resolve_top_scores"]


async def resolve_leaderboard(ctx: Context, leaderboard_id: str) -> LeaderboardItem | None:
    return await ctx.loaders.leaderboard.load(validate_id(leaderboard_id, "id"))


async def resolve_top_scores(
    ctx: Context, leaderboard_id: str, first: int | None, after: str | None
) -> Page[ScoreItem]:
    page = await scores.top_scores(ctx.db, leaderboard_id, page_size(first), after)
    for entry in page.items:
        ctx.loaders.best_score.prime((entry.player_id, leaderboard_id), entry)
    return page


async def resolve_rank_of(ctx: Context, leaderboard_id: str, player_id: str) -> RankInfo | None:
    return await ctx.loaders.rank.load((validate_id(player_id, "playerId"), leaderboard_id))


async def create_leaderboard(
    ctx: Context,
    *,
    leaderboard_id: str,
    name: str,
    period: Period,
    sort_order: SortOrder,
    score_width: int,
    starts_at: datetime | None,
    ends_at: datetime | None,
) -> LeaderboardItem:
    board = LeaderboardItem(
        leaderboard_id=validate_id(leaderboard_id, "id"),
        name=validate_name(name),
        period=period,
        sort_order=sort_order,
        score_width=score_width,
        starts_at=starts_at,
        ends_at=ends_at,
        created_at=now(),
    )
    await leaderboards.create_leaderboard(ctx.db, board)
    ctx.loaders.leaderboard.prime(board.leaderboard_id, board)
    return board
