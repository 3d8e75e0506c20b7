"""Resolve functions for boards: metadata, top scores, ranks, around-me, and creation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from datetime import datetime
from functools import partial

from dynamo import leaderboards, ranks, results, scores
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.leaderboards import (
    BoardStatus,
    LeaderboardItem,
    Operator,
    Period,
    SortOrder,
    close_due,
)
from dynamo.reads import Page
from dynamo.results import ResultItem
from dynamo.scores import ScoreItem
from resolvers.changes import writing
from resolvers.context import Context
from resolvers.dependencies import BoardRules, EntryCount, first_page
from resolvers.erased import existing_players
from resolvers.final import final_count, final_entry, final_rank, is_final
from resolvers.inputs import (
    TierArguments,
    check_new_board,
    clean_id,
    clean_id_list,
    clean_instant,
    clean_name,
    clean_reward_tiers,
    naming,
    page_of,
)
from resolvers.loaders import RankInfo
from resolvers.ranks import WindowRanks, check_window_size

__all__ = [
    "create_leaderboard",
    "resolve_around",
    "resolve_entry_count",
    "resolve_final_result",
    "resolve_final_standings",
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
    partition), else read from the count shards of a write-sharded board's partitions; a
    FINAL board's is its ``finalCount``, read with the board."""
    ctx.depends(EntryCount(board.leaderboard_id))
    if is_final(board):
        return final_count(board)
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
    names: bool = False,
) -> tuple[Page[ScoreItem], WindowRanks]:
    """A page of the board, best first, with the ranks of its entries (computed on demand,
    or before returning ``with_ranks``; the entries' players are read before returning
    ``with_players``, and the entries whose player was erased meanwhile left out: see
    resolvers/erased.py; with ``names`` too, only the players of the entries that hold no
    copy of their name, the name being all that is asked of them). A first page is a
    dependency of the answer; a later one is not one a cached answer may hold. A FINAL
    board's page is of its final standings."""
    if is_final(board):
        return await _final_top(ctx, board, first, after, with_players=with_players)
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
    unnamed = [e.player_id for e in page.items if not (names and e.player_name is not None)]
    readers = unnamed if with_players else []
    present, _ = await asyncio.gather(
        existing_players(ctx, readers),
        window.compute() if with_ranks and page.items else asyncio.sleep(0),
    )
    if readers:
        found = dict(zip(readers, present, strict=True))
        page = page.keeping([found.get(e.player_id, True) for e in page.items])
    return page, window


async def _final_top(
    ctx: Context,
    board: LeaderboardItem,
    first: int | None,
    after: str | None,
    *,
    with_players: bool,
) -> tuple[Page[ScoreItem], WindowRanks]:
    """A page of a FINAL board's entries from its final standings (one Query of GSI2
    whatever its partitions): in the same order, each entry as it was frozen, ranked by its
    result, with that list's cursors."""
    results_page = await resolve_final_standings(
        ctx, board, first, after, with_players=with_players
    )
    page = Page(
        [final_entry(r) for r in results_page.items],
        results_page.cursors,
        results_page.has_next,
        resume_after=results_page.resume_after,
    )
    window = WindowRanks(
        ctx,
        board.leaderboard_id,
        page.items,
        from_top=after is None,
        known=[r.rank for r in results_page.items],
    )
    return page, window


async def resolve_final_standings(
    ctx: Context,
    board: LeaderboardItem,
    first: int | None,
    after: str | None,
    *,
    with_players: bool = False,
) -> Page[ResultItem]:
    """A page of the board's final standings, in the board's order; empty, and read from
    nowhere, until the board is FINAL (its list has no cursor yet: any ``after`` is refused).
    ``with_players``: the results' players are read before returning, and the results whose
    player was erased meanwhile left out (see resolvers/erased.py)."""
    ctx.uncacheable()  # no dependency names a board's results
    if board.status(ctx.clock()) is not BoardStatus.FINAL:
        return await page_of(_no_results, first, after)
    read = partial(results.board_results, ctx.db, board.leaderboard_id)
    page = await page_of(read, first, after)
    for result in page.items:
        ctx.loaders.result.prime((result.player_id, result.leaderboard_id), result)
    if with_players:
        page = page.keeping(await existing_players(ctx, [r.player_id for r in page.items]))
    return page


async def _no_results(first: int, after: str | None) -> Page[ResultItem]:
    """The final standings of a board that is not FINAL: none."""
    if after is not None:
        raise LeaderboardError(
            ErrorCode.INVALID_CURSOR,
            "the board is not final: its final standings have no cursor yet",
            Subject.CURSOR,
        )
    return Page(items=[], cursors=[], has_next=False)


async def resolve_final_result(
    ctx: Context, board: LeaderboardItem, player_id: str
) -> ResultItem | None:
    """The player's final result on the board; None until the board is FINAL, and for a
    player that had no entry on it."""
    key = (clean_id(player_id, "playerId"), board.leaderboard_id)
    ctx.uncacheable()
    if board.status(ctx.clock()) is not BoardStatus.FINAL:
        return None
    return await ctx.loaders.result.load(key)


async def resolve_rank_of(ctx: Context, board: LeaderboardItem, player_id: str) -> RankInfo | None:
    """The player's rank on the board; on a FINAL board, its result's (one GetItem)."""
    key = (clean_id(player_id, "playerId"), board.leaderboard_id)
    _final_board(ctx, board)
    return await ctx.loaders.rank.load(key)


def _final_board(ctx: Context, board: LeaderboardItem) -> None:
    """A FINAL board this request holds, in its board loader: the rank loader then ranks the
    board's players by their results, without asking the rank index."""
    if is_final(board):
        ctx.loaders.leaderboard.prime(board.leaderboard_id, board)


async def resolve_ranks_of(
    ctx: Context, board: LeaderboardItem, player_ids: list[str]
) -> list[RankInfo]:
    """The entries of the given players (a friends board), best first; players without an
    entry are left out. On a FINAL board, their results (one BatchGetItem)."""
    ids = clean_id_list(player_ids, "playerIds")
    _final_board(ctx, board)
    found = await ctx.loaders.rank.load_many([(p, board.leaderboard_id) for p in ids])
    entries = [r for r in found if r is not None]
    return sorted(entries, key=lambda r: (r.rank, r.attained_at, r.player_id))


async def resolve_around(
    ctx: Context,
    board: LeaderboardItem,
    player_id: str,
    before: int,
    after: int,
    *,
    with_players: bool = False,
) -> list[RankInfo] | None:
    """The player's entry with up to ``before`` better and ``after`` worse entries, ranked;
    None when the player has no entry on the board. ``with_players``: the entries' players
    are read before returning. A FINAL board's window is of its final standings."""
    check_window_size(before, after)
    leaderboard_id = board.leaderboard_id
    key = (clean_id(player_id, "playerId"), leaderboard_id)
    if is_final(board):
        return await _final_around(ctx, key, before, after, with_players=with_players)
    entry = await ctx.loaders.entry.load(key)
    if entry is None:
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


async def _final_around(
    ctx: Context, key: tuple[str, str], before: int, after: int, *, with_players: bool
) -> list[RankInfo] | None:
    """A FINAL board's window: the player's result (one GetItem) and the results listed
    before and after it in the final standings (one Query of GSI2 each way, at once), each
    with its rank and the total of its result; None for a player with no result."""
    ctx.uncacheable()  # no dependency names a board's results
    found = await ctx.loaders.result.load(key)
    if found is None:
        return None
    above, below = await results.results_around(ctx.db, found, before, after)
    window = [*above, found, *below]
    for result in window:
        ctx.loaders.result.prime((result.player_id, result.leaderboard_id), result)
    present = await existing_players(ctx, [r.player_id for r in window] if with_players else [])
    kept = present if with_players else [True] * len(window)
    return [final_rank(r) for r, k in zip(window, kept, strict=True) if k]


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
    archive_days: int | None = None,
    reward_tiers: Sequence[TierArguments] | None = None,
) -> LeaderboardItem:
    ends = clean_instant(ends_at, "endsAt") if ends_at else None
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
        ends_at=ends,
        partitions=partitions,
        created_at=ctx.clock(),
        archive_days=archive_days,
        close_due=close_due(ends) if ends is not None else None,
    )
    check_new_board(board)
    tiers = clean_reward_tiers(reward_tiers, board.score_width)
    if tiers is not None:
        board = board.model_copy(update={"reward_tiers": tiers})
    with (
        writing(ctx.responses, ctx.broker, atomic=True) as written,
        naming({Subject.LEADERBOARD: "id"}),
    ):
        await leaderboards.create_leaderboard(ctx.db, board)
        written.boards.append(board.leaderboard_id)
    ctx.loaders.leaderboard.prime(board.leaderboard_id, board)
    return board
