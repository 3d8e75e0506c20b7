"""Live leaderboards: the top N of a board, pushed again whenever it changes."""

from __future__ import annotations

from collections.abc import AsyncIterator

from dynamo import scores
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.ids import validate_id
from dynamo.scores import ScoreItem
from resolvers.context import Context
from resolvers.pagination import page_size

__all__ = ["watch_top"]


async def watch_top(
    ctx: Context, leaderboard_id: str, first: int | None
) -> AsyncIterator[list[ScoreItem]]:
    """The board's top ``first`` now, then again after each play that changes it. A play that
    changes an entry outside the top wakes the watcher, which re-reads the top (one Query),
    finds it unchanged and sends nothing."""
    size = page_size(first)
    board_id = validate_id(leaderboard_id, "leaderboardId")
    if await ctx.loaders.leaderboard.load(board_id) is None:
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_NOT_FOUND, f"no leaderboard {board_id!r}", "leaderboardId"
        )
    async with ctx.broker.listen(board_id) as changes:
        sent: list[tuple[str, int, str]] | None = None
        while True:
            top = (await scores.top_scores(ctx.db, board_id, size, None)).items
            seen = [(e.player_id, e.score, e.attained_at.isoformat()) for e in top]
            if seen != sent:
                sent = seen
                yield top
            await changes.wait()
            ctx.next_push()
