"""Live leaderboards: the top N of a board, pushed again whenever it changes, until the board
is FINAL: then once more, from its final standings, and no more."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass

from dynamo import leaderboards, players, results, scores
from dynamo.db import Db
from dynamo.errors import ErrorCode
from dynamo.leaderboards import LeaderboardItem
from dynamo.players import PlayerItem
from dynamo.reads import Page
from dynamo.scores import ScoreItem
from resolvers.context import Context
from resolvers.final import final_entry, is_final
from resolvers.inputs import FieldError, clean_id, page_size

__all__ = ["Push", "watch_top"]


@dataclass(frozen=True)
class Push:
    """What one push of a watched board shows: the board as read, and its top."""

    board: LeaderboardItem
    entries: list[ScoreItem]
    ranks: list[int] | None
    """The entries' ranks when the read gave them (a FINAL board's); else None."""


@dataclass(frozen=True)
class Top:
    """A board's top entries with the board and their players, read once for every
    subscriber that the same notice woke; a FINAL board's from its final standings, with
    their ranks."""

    board: LeaderboardItem | None
    entries: list[ScoreItem]
    players: list[PlayerItem]
    ranks: list[int] | None = None
    """The entries' ranks when the read gave them (a FINAL board's results); else they are
    computed from the entries, a run from the top."""


async def _read_top(
    db: Db, board_id: str, size: int, *, consistent: bool, known: LeaderboardItem | None
) -> Top:
    """The board (one Query; a write-sharded board without its count, which a push asking
    for it reads then) and its top (one Query per partition) at once, then their players
    (BatchGetItem); ``consistent``: the board and its top with ConsistentRead. The top
    is read with the partitions of the board ``known`` from an earlier read (a board's never
    change); without one, or should the board read now have others, once the board is read.
    A board read FINAL has its top read from its final standings (one Query of GSI2), ranked
    by its results."""
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
    ranks: list[int] | None = None
    if board is not None and is_final(board):
        # Its final standings (one Query of GSI2), which outlast its live entries.
        standings = await results.board_results(db, board.leaderboard_id, size, None)
        page = Page(
            [final_entry(r) for r in standings.items], standings.cursors, standings.has_next
        )
        ranks = [r.rank for r in standings.items]
    entries = page.items
    found = await players.get_players(db, [e.player_id for e in entries]) if entries else []
    # An entry whose player was erased meanwhile is left out (see resolvers/erased.py).
    kept = [i for i, p in enumerate(found) if p is not None]
    return Top(
        board,
        [entries[i] for i in kept],
        [p for p in found if p is not None],
        [ranks[i] for i in kept] if ranks is not None else None,
    )


async def _top(
    db: Db, board: LeaderboardItem | None, size: int, consistent: bool
) -> Page[ScoreItem]:
    if board is None or is_final(board):
        return Page([], [], has_next=False)
    return await scores.top_scores(db, board, size, None, consistent=consistent)


async def watch_top(ctx: Context, leaderboard_id: str, first: int | None) -> AsyncIterator[Push]:
    """The board's top ``first`` now, then again after each play that changes it. A play that
    changes an entry outside the top wakes the watcher, which finds the top unchanged and
    sends nothing. Once a read finds the board FINAL (its close complete), the watcher sends
    its top from its final standings, whether or not it changed, and ends: a FINAL board
    changes no more.

    A board's close changes its item, and the change feed carries every change of a board's
    item (rankindex/notices.py), which wakes the board's watchers on every instance; without
    a feed, the broker's periodic refresh of a quiet board wakes them
    (``refresh_quiet_topics``). A watcher of a board FINAL already sends one push and ends.

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
            push = Push(top.board, top.entries, top.ranks)
            ctx.loaders.leaderboard.prime(board_id, top.board)
            for player in top.players:
                ctx.loaders.player.prime(player.player_id, player)
            seen = [(e.player_id, e.score, e.attained_at.isoformat()) for e in top.entries]
            if is_final(top.board):
                yield push
                return
            if seen != sent:
                sent = seen
                yield push
            await changes.wait()
            ctx.next_push()
