"""Resolve functions for boards: metadata, top scores, ranks, around-me, and creation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import datetime
from functools import partial

from dynamo import leaderboards, ranks, scores
from dynamo.errors import Subject
from dynamo.leaderboards import (
    LeaderboardItem,
    Operator,
    Period,
    SortOrder,
)
from dynamo.reads import Page
from dynamo.scores import ScoreItem
from resolvers.changes import writing
from resolvers.context import Context
from resolvers.dependencies import BoardRules, EntryCount, first_page
from resolvers.erased import existing_players
from resolvers.inputs import (
    check_new_board,
    clean_id,
    clean_id_list,
    clean_instant,
    clean_name,
    naming,
    page_of,
)
from resolvers.loaders import RankInfo
from resolvers.ranks import WindowRanks, check_window_size

__all__ = [
    "create_leaderboard",
    "resolve_around",
    "resolve_entry_count",
    "resolve_leaderboard",
    "resolve_rank_of",
    "resolve_ranks_of",
    "resolve_top_scores",
]


async def resolve_leaderboard(ctx: Context, leaderboard_id: str) -> LeaderboardItem | None:
    board_id = clean_id(leaderboard_id, "id")
    ctx.depends(BoardRules(board_id))
    return await ctx.loaders.leaderboard.load(board_id)


def resolve_entry_count(ctx: Context, board: LeaderboardItem) -> int | Awaitable[int]:
    """The board's ``entryCount``: at hand when the board's read brought it (a board of one
    partition), else read from the count shards of a write-sharded board's partitions."""
    ctx.depends(EntryCount(board.leaderboard_id))
    if board.counted:
        return board.entry_count
    return _read_count(ctx, board)


async def _read_count(ctx: Context, board: LeaderboardItem) -> int:
    count = await ctx.loaders.entry_count.load(board.leaderboard_id)
    return board.entry_count if count is None else count


async def resolve_top_scores(
    ctx: Context,
    board: LeaderboardItem,
    first: int | None,
    after: str | None,
    *,
    with_players: bool = False,
    with_ranks: bool = False,
) -> tuple[Page[ScoreItem], WindowRanks]:
    """A page of the board, best first, with the ranks of its entries (computed on demand,
    or before returning ``with_ranks``; the entries' players are read before returning
    ``with_players``, and the entries whose player was erased meanwhile left out: see
    resolvers/erased.py). A first page is a dependency of the answer; a later one is not one
    a cached answer may hold."""
    leaderboard_id = board.leaderboard_id
    consistent = after is None and ctx.consistent(leaderboard_id)
    read = partial(scores.top_scores, ctx.db, board, consistent=consistent)
    page = await page_of(read, first, after)
    if after is None:
        ctx.depends(first_page(board, page.items, page.has_next))
    else:
        ctx.uncacheable()
    for entry in page.items:
        ctx.loaders.entry.prime((entry.player_id, leaderboard_id), entry)
    window = WindowRanks(ctx, leaderboard_id, page.items, from_top=after is None)
    present, _ = await asyncio.gather(
        existing_players(ctx, [e.player_id for e in page.items] if with_players else []),
        window.compute() if with_ranks and page.items else asyncio.sleep(0),
    )
    if with_players:
        page = page.keeping(present)
    return page, window


async def resolve_rank_of(ctx: Context, leaderboard_id: str, player_id: str) -> RankInfo | None:
    return await ctx.loaders.rank.load((clean_id(player_id, "playerId"), leaderboard_id))


async def resolve_ranks_of(
    ctx: Context, leaderboard_id: str, player_ids: list[str]
) -> list[RankInfo]:
    """The entries of the given players (a friends board), best first; players without an
    entry are left out."""
    ids = clean_id_list(player_ids, "playerIds")
    found = await ctx.loaders.rank.load_many([(p, leaderboard_id) for p in ids])
    entries = [r for r in found if r is not None]
    return sorted(entries, key=lambda r: (r.rank, r.attained_at, r.player_id))


async def resolve_around(
    ctx: Context,
    leaderboard_id: str,
    player_id: str,
    before: int,
    after: int,
    *,
    with_players: bool = False,
) -> list[RankInfo] | None:
    """The player's entry with up to ``before`` better and ``after`` worse entries, ranked;
    None when the player has no entry on the board. ``with_players``: the entries' players
    are read before returning."""
    check_window_size(before, after)
    key = (clean_id(player_id, "playerId"), leaderboard_id)
    entry, board = (
        await ctx.loaders.entry.load(key),
        await ctx.loaders.leaderboard.load(leaderboard_id),
    )
    if entry is None or board is None:
        return None
    window, from_top = await ranks.around(ctx.db, board, entry, before, after)
    ranked, present, count = await asyncio.gather(
        ctx.ranks.window_ranks(board, window, from_top=from_top),
        existing_players(ctx, [e.player_id for e in window] if with_players else []),
        ctx.loaders.entry_count.load(leaderboard_id),
    )
    for item in window:
        ctx.loaders.entry.prime((item.player_id, leaderboard_id), item)
    total = max([count or 0, *ranked])
    kept = present if with_players else [True] * len(window)
    return [RankInfo.of(e, r, total) for e, r, k in zip(window, ranked, kept, strict=True) if k]


async def create_leaderboard(
    ctx: Context,
    *,
    leaderboard_id: str,
    name: str,
    period: Period,
    sort_order: SortOrder,
    operator: Operator,
    score_width: int,
    starts_at: datetime | None,
    ends_at: datetime | None,
    min_score: int | None = None,
    max_score: int | None = None,
    partitions: int = 1,
) -> LeaderboardItem:
    board = LeaderboardItem(
        leaderboard_id=clean_id(leaderboard_id, "id"),
        name=clean_name(name),
        period=period,
        sort_order=sort_order,
        operator=operator,
        score_width=score_width,
        min_score=min_score,
        max_score=max_score,
        starts_at=clean_instant(starts_at, "startsAt") if starts_at else None,
        ends_at=clean_instant(ends_at, "endsAt") if ends_at else None,
        partitions=partitions,
        created_at=ctx.clock(),
    )
    check_new_board(board)
    with (
        writing(ctx.responses, ctx.broker, atomic=True) as written,
        naming({Subject.LEADERBOARD: "id"}),
    ):
        await leaderboards.create_leaderboard(ctx.db, board)
        written.boards.append(board.leaderboard_id)
    ctx.loaders.leaderboard.prime(board.leaderboard_id, board)
    return board
