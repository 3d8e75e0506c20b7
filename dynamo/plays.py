"""A play as submitted, and what recording it produced."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dynamo.leaderboards import LeaderboardItem
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem

__all__ = [
    "MAX_DURATION_SEC",
    "MAX_TARGETS",
    "BoardResult",
    "Play",
    "PlayResult",
]

MAX_DURATION_SEC = 2_147_483_647
"""Longest duration of a play, in seconds (``durationSec``): what a GraphQL ``Int`` carries."""
MAX_TARGETS = 20
"""Boards per play. A transaction holds at most 100 items: 3 for the session, the player and
the play record, and up to 3 per board (a first entry's count shard, guard and Score item; a
change's guard, old and new Score item)."""


@dataclass(frozen=True)
class Play:
    player_id: str
    game_id: str
    score: int
    leaderboard_ids: tuple[str, ...] = ()
    family_ids: tuple[str, ...] = ()
    """Periodic families: the play enters each family's board of the current period."""
    duration_sec: int | None = None
    submission_id: str | None = None
    """Client-chosen ULID or UUID that makes the play idempotent."""
    metadata: dict[str, Any] | None = None
    """The client's JSON object about the play (see dynamo.metadata)."""


@dataclass(frozen=True)
class BoardResult:
    leaderboard_id: str
    entry: ScoreItem
    """The player's entry on the board after the play (new or standing)."""
    improved: bool
    """Whether the play changed the entry."""
    board: LeaderboardItem | None
    """The board as this play left it; None when the result is replayed from a record."""
    version: int | None = None
    """The entry guard's version as this play left it, when the play changed the entry;
    None when it did not, or when the result is replayed from a record."""
    first: bool = False
    """Whether the play made the player's first entry on the board (none stood before)."""
    previous_rank_value: int | None = None
    """The rank value of the entry the play replaced, when one stood and its guard knew it."""


@dataclass(frozen=True)
class PlayResult:
    session: SessionItem
    boards: list[BoardResult]
    """One per board, in the order named: leaderboardIds, then the families' boards."""
    duplicate: bool = False
    """True when this is a repeat of an already recorded play."""


def play_session(
    play: Play, session_id: str, played_at: datetime, leaderboard_ids: Sequence[str]
) -> SessionItem:
    """The Session item that records ``play`` on ``leaderboard_ids`` (the first is the
    session's ``leaderboardId``)."""
    return SessionItem(
        session_id=session_id,
        player_id=play.player_id,
        game_id=play.game_id,
        score=play.score,
        duration_sec=play.duration_sec,
        played_at=played_at,
        leaderboard_id=leaderboard_ids[0],
        leaderboard_ids=list(leaderboard_ids),
        submission_id=play.submission_id,
        metadata=play.metadata,
    )
