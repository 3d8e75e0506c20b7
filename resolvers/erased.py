"""Rows whose player is gone by the time its players are read.

An erasure deletes a player's entries and sessions first and its Player item last, so a list
read just before an erasure finished can hold a row (an entry, a session) whose player a read
of the players a moment later no longer finds. Such a row is left out of the answer, as a read
made a moment later would have left it out; and a player field that finds its player gone
answers PLAYER_NOT_FOUND, never an internal error.

Likewise an entry whose board item is gone: DynamoDB's TTL deletes an expired periodic
board's items in no particular order, so the board can go before its entries. Its
``leaderboard`` field answers LEADERBOARD_NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Sequence

from dynamo.errors import ErrorCode, LeaderboardError
from resolvers.context import Context

__all__ = ["board_gone", "erased_meanwhile", "existing_players"]


async def existing_players(ctx: Context, player_ids: Sequence[str]) -> list[bool]:
    """Read the players into the request's player loader (one batch); whether each exists."""
    if not player_ids:
        return []
    found = await ctx.loaders.player.load_many(list(player_ids))
    return [player is not None for player in found]


def erased_meanwhile(player_id: str) -> LeaderboardError:
    """The error of a player field whose player was erased while the request ran."""
    return LeaderboardError(
        ErrorCode.PLAYER_NOT_FOUND, f"player {player_id!r} was erased while this request ran"
    )


def board_gone(leaderboard_id: str) -> LeaderboardError:
    """The error of an entry's board field whose board item is gone (expired, or deleted
    while the request ran)."""
    return LeaderboardError(
        ErrorCode.LEADERBOARD_NOT_FOUND,
        f"leaderboard {leaderboard_id!r} of this entry is gone: it expired or was deleted",
    )
