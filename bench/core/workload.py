"""The benchmarked boards: their ids, the games, the players and their one play each.

Every player plays once on the main board (:data:`BOARD_ID`). Every fourth player's play also
enters the season board and every twentieth's the daily board too, so the season board holds a
quarter of the players and the daily board a twentieth, all of whom stand on three boards (what
a profile page shows).

Every random choice goes through the ``random.Random`` passed in, so a seed fixes the boards.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, Period
from dynamo.players import PlayerItem
from dynamo.plays import Play

__all__ = [
    "BOARD_ID",
    "DAILY_EVERY",
    "DAILY_ID",
    "GAMES",
    "PROFILE_BOARDS",
    "SEASON_EVERY",
    "SEASON_ID",
    "TOP_N",
    "LoadedPlayer",
    "Variables",
    "board_ids_of",
    "new_board",
    "new_boards",
    "new_player",
    "player_id",
    "plays",
]

BOARD_ID = "bench"
SEASON_ID = "bench-season"
DAILY_ID = "bench-daily"
PROFILE_BOARDS = (BOARD_ID, SEASON_ID, DAILY_ID)
"""The boards of a profile page, the main board first."""
SEASON_EVERY = 4
"""Every fourth player also plays on the season board."""
DAILY_EVERY = 20
"""Every twentieth player also plays on the daily board (and so on all three)."""
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
    board_ids: tuple[str, ...] = (BOARD_ID,)
    """The boards the player has an entry on, the main board first."""


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


def new_boards() -> list[LeaderboardItem]:
    """The main board, the season board and the daily board, in :data:`PROFILE_BOARDS` order."""
    at = now()
    return [
        new_board(),
        LeaderboardItem(
            leaderboard_id=SEASON_ID, name="Benchmark season", period=Period.SEASON, created_at=at
        ),
        LeaderboardItem(
            leaderboard_id=DAILY_ID, name="Benchmark daily", period=Period.DAILY, created_at=at
        ),
    ]


def board_ids_of(n: int) -> tuple[str, ...]:
    """The boards that player number ``n`` (from 1) plays on."""
    if n % DAILY_EVERY == 0:
        return PROFILE_BOARDS
    if n % SEASON_EVERY == 0:
        return (BOARD_ID, SEASON_ID)
    return (BOARD_ID,)


def player_id(n: int) -> str:
    """The id of player number ``n`` (from 1)."""
    return f"player-{n:06d}"


def plays(count: int, rng: random.Random, *, extra_boards: bool = False) -> list[Play]:
    """One play per player; scores in 0..count/3, so many players share a score. Every play
    enters the main board; with ``extra_boards`` some also enter the season and daily boards
    (see :func:`board_ids_of`)."""
    top = max(1, count // 3)
    return [
        Play(
            player_id=player_id(n),
            game_id=rng.choice(GAMES),
            score=rng.randint(0, top),
            leaderboard_ids=board_ids_of(n) if extra_boards else (BOARD_ID,),
            duration_sec=rng.randint(30, 900),
        )
        for n in range(1, count + 1)
    ]
