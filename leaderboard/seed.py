"""Demo data: boards, families, players and plays, written through the real submission path."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime, timedelta

from tqdm import tqdm

from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.families import FamilyItem, create_family
from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, Operator, Period, SortOrder, create_leaderboard
from dynamo.play_writes import record_play
from dynamo.players import PlayerItem, create_player
from dynamo.plays import Play

__all__ = ["SeedReport", "demo_boards", "demo_families", "seed"]

_ADJECTIVES = (
    "Swift",
    "Brave",
    "Quiet",
    "Lucky",
    "Crimson",
    "Silver",
    "Clever",
    "Wild",
    "Golden",
    "Frosty",
    "Mighty",
    "Sly",
    "Nimble",
    "Stormy",
    "Electric",
    "Shadow",
    "Cosmic",
    "Rusty",
)
_CREATURES = (
    "Otter",
    "Falcon",
    "Badger",
    "Lynx",
    "Panda",
    "Raven",
    "Gecko",
    "Wolf",
    "Heron",
    "Marten",
    "Yak",
    "Cobra",
    "Koala",
    "Puffin",
    "Bison",
    "Mantis",
    "Orca",
    "Ferret",
    "Ibis",
    "Moose",
)


@dataclass(frozen=True)
class SeedReport:
    players: int
    plays: int


def demo_boards(at: datetime) -> list[LeaderboardItem]:
    """All-time high scores, a lap-time board where lower is better, and a 90-day season."""
    day = at.replace(hour=0, minute=0, second=0, microsecond=0)
    return [
        LeaderboardItem(
            leaderboard_id="global",
            name="All-time high scores",
            period=Period.GLOBAL,
            created_at=at,
        ),
        LeaderboardItem(
            leaderboard_id="speedrun",
            name="Fastest lap (ms)",
            period=Period.GLOBAL,
            sort_order=SortOrder.ASC,
            score_width=7,
            created_at=at,
        ),
        LeaderboardItem(
            leaderboard_id="season-1",
            name="Season 1",
            period=Period.SEASON,
            starts_at=day - timedelta(days=30),
            ends_at=day + timedelta(days=60),
            created_at=at,
        ),
    ]


def demo_families(at: datetime) -> list[FamilyItem]:
    """A daily arena board, and a weekly distance board that adds up every run."""
    return [
        FamilyItem(family_id="arena", name="Arena daily", period=Period.DAILY, created_at=at),
        FamilyItem(
            family_id="distance",
            name="Weekly distance (m)",
            period=Period.WEEKLY,
            operator=Operator.INCREMENT,
            created_at=at,
        ),
    ]


def _plays(rng: random.Random, player_id: str) -> list[Play]:
    plays: list[Play] = []
    for _ in range(rng.randint(1, 3)):
        # Points come in tens, so equal scores (and shared ranks) are common. An arena play
        # enters the all-time board, the season and today's arena board at once.
        plays.append(
            Play(
                player_id=player_id,
                game_id="arena",
                score=rng.randint(0, 5_000) * 10,
                leaderboard_ids=("global", "season-1"),
                family_ids=("arena",),
                duration_sec=rng.randint(30, 900),
            )
        )
    for _ in range(rng.randint(0, 2)):
        plays.append(
            Play(
                player_id=player_id,
                game_id="racer",
                score=rng.randint(55_000, 120_000),
                leaderboard_ids=("speedrun",),
                duration_sec=rng.randint(55, 120),
            )
        )
    for _ in range(rng.randint(0, 2)):
        plays.append(
            Play(
                player_id=player_id,
                game_id="runner",
                score=rng.randint(1_000, 12_000),
                family_ids=("distance",),
                duration_sec=rng.randint(600, 4_000),
            )
        )
    return plays


async def seed(
    db: Db, players: int, *, rng_seed: int = 42, concurrency: int = 16, progress: bool = True
) -> SeedReport:
    """Create the demo boards and ``players`` players with their plays. Safe to run again:
    existing boards and players are kept, and further plays are added."""
    rng = random.Random(rng_seed)
    at = now()
    for board in demo_boards(at):
        await _ignore(ErrorCode.LEADERBOARD_EXISTS, create_leaderboard(db, board))
    for family in demo_families(at):
        await _ignore(ErrorCode.LEADERBOARD_EXISTS, create_family(db, family))
    plays: list[Play] = []
    for n in range(1, players + 1):
        player_id = f"player-{n:04d}"
        name = f"{rng.choice(_ADJECTIVES)} {rng.choice(_CREATURES)} {n}"
        player = PlayerItem(
            player_id=player_id,
            name=name,
            email=f"{player_id}@demo.example",
            created_at=at,
            updated_at=at,
        )
        await _ignore(ErrorCode.PLAYER_EXISTS, create_player(db, player))
        plays.extend(_plays(rng, player_id))
    rng.shuffle(plays)

    gate = asyncio.Semaphore(concurrency)
    with tqdm(total=len(plays), desc="seeding plays", unit="play", disable=not progress) as bar:

        async def play(sub: Play) -> None:
            async with gate:
                await record_play(db, sub)
            bar.update()

        await asyncio.gather(*(play(sub) for sub in plays))
    return SeedReport(players=players, plays=len(plays))


async def _ignore(code: ErrorCode, write: Awaitable[object]) -> None:
    try:
        await write
    except LeaderboardError as error:
        if error.code is not code:
            raise
