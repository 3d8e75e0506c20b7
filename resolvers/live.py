"""Live leaderboards: the top N of a board, pushed again whenever it changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass

from dynamo import leaderboards, players, scores
from dynamo.db import Db
from dynamo.errors import ErrorCode
from dynamo.leaderboards import LeaderboardItem
from dynamo.players import PlayerItem
from dynamo.reads import Page
from dynamo.scores import ScoreItem
from resolvers.context import Context
from resolvers.inputs import FieldError, clean_id, page_size

__all__ = ["watch_top"]


@dataclass(frozen=True)
class Top:
    """A board's top entries with the board and their players, read once for every
    subscriber that the same notice woke."""

    board: LeaderboardItem | None
    entries: list[ScoreItem]
    players: list[PlayerItem]


async def _read_top(
    db: Db, board_id: str, size: int, *, consistent: bool, known: LeaderboardItem | None
) -> Top:
    """The board (one Query; a write-sharded board without its count, which a push asking
    for it reads then) and its top (one Query per partition) at once, then their players
    (BatchGetItem); ``consistent``: the board and its top with ConsistentRead. The top
    is read with the partitions of the board ``known`` from an earlier read (a board's never
    change); without one, or should the board read now have others, once the board is read."""
    if known is None:
        [board] = await leaderboards.get_leaderboards(
            db, [board_id], consistent=consistent, count=False
        )
        page = await _top(db, board, size, consistent)
    else:
        [board], page = await asyncio.gather(
            leaderboards.get_leaderboards(db, [board_id], consistent=consistent, count=False),
            _top(db, known, size, consistent),
        )
        if board is not None and board.partitions != known.partitions:
            page = await _top(db, board, size, consistent)
    entries = page.items
    found = await players.get_players(db, [e.player_id for e in entries]) if entries else []
    # An entry whose player was erased meanwhile is left out (see resolvers/erased.py).
    kept = [(e, p) for e, p in zip(entries, found, strict=True) if p is not None]
    return Top(board, [e for e, _ in kept], [p for _, p in kept])


async def _top(
    db: Db, board: LeaderboardItem | None, size: int, consistent: bool
) -> Page[ScoreItem]:
    if board is None:
        return Page([], [], has_next=False)
    return await scores.top_scores(db, board, size, None, consistent=consistent)


async def watch_top(
    ctx: Context, leaderboard_id: str, first: int | None
) -> AsyncIterator[list[ScoreItem]]:
    """The board's top ``first`` now, then again after each play that changes it. A play that
    changes an entry outside the top wakes the watcher, which finds the top unchanged and
    sends nothing.

    The subscribers of a board that one notice wakes share one read of its top (see
    ``Broker.shared``); each primes its own loaders with what was read, so that a push's
    ranks and players' names cost no further call. Within a few seconds of a write to the
    board through this process, that read is consistent: the push after the write shows
    it."""
    size = page_size(first)
    board_id = clean_id(leaderboard_id, "leaderboardId")
    db, writes = ctx.db, ctx.broker.writes

    known: LeaderboardItem | None = None

    def read() -> Awaitable[Top]:
        return _read_top(db, board_id, size, consistent=writes.recent(board_id), known=known)

    async with ctx.broker.listen(board_id) as changes:
        sent: list[tuple[str, int, str]] | None = None
        while True:
            top = await ctx.broker.shared(board_id, ("top", size), read)
            if top.board is None:
                raise FieldError(
                    ErrorCode.LEADERBOARD_NOT_FOUND, f"no leaderboard {board_id!r}", "leaderboardId"
                )
            known = top.board
            ctx.loaders.leaderboard.prime(board_id, top.board)
            for player in top.players:
                ctx.loaders.player.prime(player.player_id, player)
            seen = [(e.player_id, e.score, e.attained_at.isoformat()) for e in top.entries]
            if seen != sent:
                sent = seen
                yield top.entries
            await changes.wait()
            ctx.next_push()
