"""The table items a submission writes, built directly for the bulk loader and raw calls.

:func:`play_items` (and :func:`bulk_items`, for one board) yields exactly what creating a
player and submitting its first play leaves in the table, so boards loaded with BatchWriteItem
match boards loaded through submit_score.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bench.core.workload import new_player
from dynamo import scores
from dynamo.entry_guards import ENTRY_GUARD, guard_for
from dynamo.leaderboards import LeaderboardItem
from dynamo.players import EMAIL_CLAIM, PLAYER, PlayerItem
from dynamo.plays import Play, play_session
from dynamo.scores import ScoreItem
from dynamo.sessions import SESSION, SessionItem

__all__ = [
    "bulk_items",
    "claim_item",
    "guard_item",
    "play_items",
    "player_item",
    "score_item",
    "session_item",
]


def player_item(player: PlayerItem) -> dict[str, Any]:
    """The Player item, keys included."""
    return PLAYER.item(player)


def claim_item(player: PlayerItem) -> dict[str, Any]:
    """The item that reserves the player's e-mail address."""
    return {**EMAIL_CLAIM.keys(email=player.email), "playerId": player.player_id}


def session_item(session: SessionItem) -> dict[str, Any]:
    """The Session item, keys included."""
    return SESSION.item(session)


def score_item(board: LeaderboardItem, entry: ScoreItem) -> dict[str, Any]:
    """The Score item of ``entry`` on ``board``, keys included (in the player's partition of
    a write-sharded board)."""
    return scores.score_item(board, entry)


def guard_item(board: LeaderboardItem, entry: ScoreItem) -> dict[str, Any]:
    """The entry guard that points at the player's Score item on ``board``, at the entry's
    ``version`` (as a play writes it: see dynamo/entries.py ``guard_for``)."""
    return ENTRY_GUARD.item(guard_for(board, entry, entry.version))


def bulk_items(
    board: LeaderboardItem, sub: Play, at: datetime, session_id: str
) -> list[dict[str, Any]]:
    """:func:`play_items` for a play on ``board`` alone."""
    if sub.leaderboard_ids != (board.leaderboard_id,):
        raise ValueError(f"bulk_items loads plays on {board.leaderboard_id!r} alone: {sub}")
    return play_items([board], sub, at, session_id)


def play_items(
    boards: Sequence[LeaderboardItem], sub: Play, at: datetime, session_id: str
) -> list[dict[str, Any]]:
    """Every item that creating the player and then submitting ``sub`` as its first play at
    ``at`` leaves in the table: the player (with the play counted in), its e-mail claim, the
    session (listing every board it entered), and per board the entry guard and the Score item
    (both at version 1, a first entry; the Score item holding the player's name).

    ``boards`` are the boards ``sub`` names, in its order; ``sub`` names no family and no
    submission id (which would write a play record). The boards' ``entryCount`` is the
    loader's to set.
    """
    if (
        sub.leaderboard_ids != tuple(b.leaderboard_id for b in boards)
        or not boards
        or sub.family_ids
        or sub.submission_id is not None
    ):
        raise ValueError(f"play_items loads plays on named boards alone: {sub}")
    player = new_player(sub.player_id, at).model_copy(
        update={"lifetime_score": sub.score, "games_played": 1}
    )
    session = play_session(sub, session_id, at, [b.leaderboard_id for b in boards])
    items = [player_item(player), claim_item(player), session_item(session)]
    for board in boards:
        entry = ScoreItem(
            leaderboard_id=board.leaderboard_id,
            player_id=sub.player_id,
            score=sub.score,
            attained_at=at,
            session_id=session_id,
            ttl=board.ttl,
            version=1,
            player_name=player.name,
        )
        items += [guard_item(board, entry), score_item(board, entry)]
    return items
