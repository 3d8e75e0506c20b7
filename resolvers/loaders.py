"""Per-request DataLoaders: every by-key read of a request goes through one of these.

Each loader returns exactly one result per key, in key order, ``None`` where missing. Loaders
are created per request (they cache), never shared between requests.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TypeVar

from aiodataloader import DataLoader

from dynamo import entries, leaderboards, players, scores, sessions
from dynamo.leaderboards import LeaderboardItem
from dynamo.players import PlayerItem
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem
from dynamo.table import BATCH_GET_LIMIT, Db
from resolvers.rank_source import RankSource

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
    """A player's entry by (playerId, leaderboardId): AP4 for one key, the entry guards in one
    BatchGetItem for several."""

    async def batch_load_fn(self, keys: list[tuple[str, str]]) -> list[ScoreItem | None]:
        return await entries.current_entries(self.db, keys)


@dataclass(frozen=True)
class RankInfo:
    """Standard competition ("1224") rank: 1 + the number of entries with a strictly better
    score, out of the board's entries."""

    rank: int
    total: int
    entry: ScoreItem
    board: LeaderboardItem


class RankByPlayerBoardLoader(_Loader[tuple[str, str], RankInfo]):
    """AP10: a player's rank by (playerId, leaderboardId). The tick's keys are grouped by board;
    each board's ranks come from one set of concurrent range COUNTs (dynamo.ranks)."""

    def __init__(
        self,
        db: Db,
        best_score: BestScoreByPlayerBoardLoader,
        board: LeaderboardByIdLoader,
        source: RankSource,
    ) -> None:
        super().__init__(db)
        self.best_score = best_score
        self.board = board
        self.source = source

    async def batch_load_fn(self, keys: list[tuple[str, str]]) -> list[RankInfo | None]:
        found = await asyncio.gather(
            self.best_score.load_many(keys), self.board.load_many([b for _, b in keys])
        )
        by_board: dict[str, tuple[LeaderboardItem, list[ScoreItem]]] = {}
        for entry, board in zip(*found, strict=True):
            if entry is not None and board is not None:
                by_board.setdefault(board.leaderboard_id, (board, []))[1].append(entry)
        counted = await asyncio.gather(
            *(self.source.better_counts(board, es) for board, es in by_board.values())
        )
        better = dict(zip(by_board, counted, strict=True))
        return [
            None
            if entry is None or board is None
            else _rank_info(board, entry, better[board.leaderboard_id])
            for entry, board in zip(*found, strict=True)
        ]


def _rank_info(board: LeaderboardItem, entry: ScoreItem, better: dict[str, int]) -> RankInfo:
    count = better[scores.rank_value(entry.score, board.score_width, board.sort_order)]
    # entryCount is maintained by the submission transaction; max() keeps the answer coherent
    # when an entry read is fresher than the board item read.
    return RankInfo(
        rank=count + 1, total=max(board.entry_count, count + 1), entry=entry, board=board
    )


@dataclass(frozen=True)
class Loaders:
    player: PlayerByIdLoader
    leaderboard: LeaderboardByIdLoader
    session: SessionByKeyLoader
    best_score: BestScoreByPlayerBoardLoader
    rank: RankByPlayerBoardLoader

    @classmethod
    def create(cls, db: Db, ranks: RankSource) -> Loaders:
        """Fresh loaders bound to the running event loop; call once per request."""
        best_score = BestScoreByPlayerBoardLoader(db)
        leaderboard = LeaderboardByIdLoader(db)
        return cls(
            player=PlayerByIdLoader(db),
            leaderboard=leaderboard,
            session=SessionByKeyLoader(db),
            best_score=best_score,
            rank=RankByPlayerBoardLoader(db, best_score, leaderboard, ranks),
        )
