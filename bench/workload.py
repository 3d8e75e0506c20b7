"""The benchmarked board: its id, its games, its players and their one play each.

Every random choice goes through the ``random.Random`` passed in, so a seed fixes the board.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dynamo.leaderboards import LeaderboardItem, Period
from dynamo.players import PlayerItem
from dynamo.plays import Submission
from dynamo.table import now

__all__ = [
    "BOARD_ID",
    "GAMES",
    "TOP_N",
    "LoadedPlayer",
    "Variables",
    "new_board",
    "new_player",
    "plays",
]

BOARD_ID = "bench"
GAMES = ("arena", "racer", "puzzle", "kart")
TOP_N = 100
"""Page size of the top-scores operation."""

Variables = dict[str, Any]
"""The GraphQL variables of one request, also the input of its raw counterpart."""


@dataclass(frozen=True)
class LoadedPlayer:
    """A player on the loaded board, with what the benchmark needs to address its items."""

    player_id: str
    email: str
    score: int
    session_id: str
    game_id: str


def new_player(player_id: str, at: datetime) -> PlayerItem:
    """The benchmark player ``player_id``, created at ``at``, with no plays yet."""
    return PlayerItem(
        player_id=player_id,
        name=f"Bench Player {player_id.removeprefix('player-')}",
        email=f"{player_id}@bench.example",
        created_at=at,
        updated_at=at,
    )


def new_board() -> LeaderboardItem:
    """The global board every player of the benchmark plays on."""
    return LeaderboardItem(
        leaderboard_id=BOARD_ID, name="Benchmark board", period=Period.GLOBAL, created_at=now()
    )


def plays(count: int, rng: random.Random) -> list[Submission]:
    """One play per player; scores in 0..count/3, so many players share a score."""
    top = max(1, count // 3)
    return [
        Submission(
            player_id=f"player-{n:06d}",
            game_id=rng.choice(GAMES),
            score=rng.randint(0, top),
            leaderboard_ids=(BOARD_ID,),
            duration_sec=rng.randint(30, 900),
        )
        for n in range(1, count + 1)
    ]
