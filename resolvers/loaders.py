"""Per-request DataLoaders: every by-key read of a request goes through one of these.

Each loader returns exactly one result per key, in key order, ``None`` where missing. Loaders
are created per request (they cache), never shared between requests.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TypeVar

from aiodataloader import DataLoader

from dynamo import leaderboards, players, scores, sessions
from dynamo.leaderboards import LeaderboardItem
from dynamo.players import PlayerItem
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem
from dynamo.table import BATCH_GET_LIMIT, Db

__all__ = [
    "BestScoreByPlayerBoardLoader",
    "LeaderboardByIdLoader",
    "Loaders",
    "PlayerByIdLoader",
    "RankByPlayerBoardLoader",
    "RankInfo",
    "SessionByKeyLoader",
]


K = TypeVar("K")
V = TypeVar("V")


class _Loader(DataLoader[K, V | None]):
    def __init__(self, db: Db) -> None:
        super().__init__(max_batch_size=BATCH_GET_LIMIT)
        self.db = db


class PlayerByIdLoader(_Loader[str, PlayerItem]):
    """AP1: players by id, one GetItem/BatchGetItem per tick."""

    async def batch_load_fn(self, keys: list[str]) -> list[PlayerItem | None]:
        return await players.get_players(self.db, keys)


class LeaderboardByIdLoader(_Loader[str, LeaderboardItem]):
    """AP9: board metadata by id, one GetItem/BatchGetItem per tick."""

    async def batch_load_fn(self, keys: list[str]) -> list[LeaderboardItem | None]:
        return await leaderboards.get_leaderboards(self.db, keys)


class SessionByKeyLoader(_Loader[tuple[str, str], SessionItem]):
    """AP8: sessions by (playerId, sessionId), one GetItem/BatchGetItem per tick."""

    async def batch_load_fn(self, keys: list[tuple[str, str]]) -> list[SessionItem | None]:
        return await sessions.get_sessions(self.db, keys)


class BestScoreByPlayerBoardLoader(_Loader[tuple[str, str], ScoreItem]):
    """AP4: a player's entry by (playerId, leaderboardId); the tick's Queries run concurrently."""

    async def batch_load_fn(self, keys: list[tuple[str, str]]) -> list[ScoreItem | None]:
        return await scores.best_scores(self.db, keys)


@dataclass(frozen=True)
class RankInfo:
    """Standard competition ("1224") rank: 1 + the number of strictly better entries."""

    rank: int
    total: int
    entry: ScoreItem
    board: LeaderboardItem


class RankByPlayerBoardLoader(_Loader[tuple[str, str], "RankInfo"]):
    """AP10: a player's rank by (playerId, leaderboardId); the tick's COUNT Queries run
    concurrently, their entries and boards read through the shared loaders."""

    def __init__(
        self, db: Db, best_score: BestScoreByPlayerBoardLoader, board: LeaderboardByIdLoader
    ) -> None:
        super().__init__(db)
        self.best_score = best_score
        self.board = board

    async def batch_load_fn(self, keys: list[tuple[str, str]]) -> list[RankInfo | None]:
        return list(await asyncio.gather(*(self._rank(p, b) for p, b in keys)))

    async def _rank(self, player_id: str, leaderboard_id: str) -> RankInfo | None:
        entry, board = await asyncio.gather(
            self.best_score.load((player_id, leaderboard_id)), self.board.load(leaderboard_id)
        )
        if entry is None or board is None:
            return None
        better = await scores.count_better(self.db, board, entry)
        # entryCount is maintained by the submission transaction; max() keeps the answer
        # coherent when the GSI read of the entry is fresher than the board item read.
        return RankInfo(
            rank=better + 1, total=max(board.entry_count, better + 1), entry=entry, board=board
        )


@dataclass(frozen=True)
class Loaders:
    player: PlayerByIdLoader
    leaderboard: LeaderboardByIdLoader
    session: SessionByKeyLoader
    best_score: BestScoreByPlayerBoardLoader
    rank: RankByPlayerBoardLoader

    @classmethod
    def create(cls, db: Db) -> Loaders:
        """Fresh loaders bound to the running event loop; call once per request."""
        best_score = BestScoreByPlayerBoardLoader(db)
        leaderboard = LeaderboardByIdLoader(db)
        return cls(
            player=PlayerByIdLoader(db),
            leaderboard=leaderboard,
            session=SessionByKeyLoader(db),
            best_score=best_score,
            rank=RankByPlayerBoardLoader(db, best_score, leaderboard),
        )
