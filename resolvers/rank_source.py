"""Where ranks come from: the rank index when it can answer, the table's COUNTs otherwise.

Both give the same numbers (standard competition ranks); the index answers in O(log N) and
the COUNT reads every better entry. The index declines, and the table answers, for a board
it does not hold completely or while its projector is behind the stream. Any failure of Redis
(refused or dropped connections, a timeout, a full connection pool, an error reply) is a
decline too: the table answers, and the request's log line counts the fallback
(``rankIndexFallbacks``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from redis.exceptions import RedisError

from dynamo import budget, ranks
from dynamo.db import Db
from dynamo.leaderboards import LeaderboardItem
from dynamo.scores import ScoreItem, attained_at_of, rank_value
from rankindex.index import RankIndex
from rankindex.keys import member_parts

__all__ = ["RankInfo", "RankSource"]

Key = tuple[str, str]
"""(playerId, leaderboardId)"""

T = TypeVar("T")

log = logging.getLogger(__name__)


async def _from_index(read: Awaitable[T | None]) -> T | None:
    """What the index answered; None when it declined or failed (counted as a fallback)."""
    try:
        return await read
    except (RedisError, OSError) as error:
        # OSError: the socket's own failures (asyncio's TimeoutError included) if any
        # escapes redis-py's wrapping.
        spending = budget.current()
        if spending is not None:
            spending.rank_index_fallbacks += 1
        log.warning(
            "rank index unavailable, counting in the table",
            extra={"error": type(error).__name__},
        )
        return None


@dataclass(frozen=True)
class RankInfo:
    """Standard competition ("1224") rank: 1 + the number of entries with a strictly better
    score, out of the board's entries."""

    rank: int
    total: int
    player_id: str
    leaderboard_id: str
    attained_at: datetime
    entry: ScoreItem | None
    """The ranked entry when the answer came with it; None when only the index was read (the
    entry is then read from the table if a client asks for it)."""

    @classmethod
    def of(cls, entry: ScoreItem, rank: int, total: int) -> RankInfo:
        return cls(
            rank=rank,
            total=total,
            player_id=entry.player_id,
            leaderboard_id=entry.leaderboard_id,
            attained_at=entry.attained_at,
            entry=entry,
        )


class RankSource:
    def __init__(self, db: Db, index: RankIndex | None) -> None:
        self.db = db
        self.index = index

    async def indexed(self, keys: Sequence[Key]) -> dict[Key, RankInfo]:
        """Ranks of the players' entries as the index holds them, in one round trip to it,
        for the keys it can answer: none when it is off or behind, or for a board it does not
        hold completely; none for a player without an indexed entry (the table may hold one
        the projector has not applied yet)."""
        if self.index is None or not keys:
            return {}
        asks: dict[str, list[tuple[str, str | None]]] = {}
        for player, board in keys:
            asks.setdefault(board, []).append((player, None))
        found = await _from_index(self.index.ranks(asks))
        if found is None:
            return {}
        answered: dict[Key, RankInfo] = {}
        for board, answers in found.items():
            for (player, _), answer in zip(asks[board], answers, strict=True):
                if answer is None or answer.member is None:
                    continue
                tie, _ = member_parts(answer.member)
                answered[(player, board)] = RankInfo(
                    rank=answer.better + 1,
                    total=answer.total,
                    player_id=player,
                    leaderboard_id=board,
                    attained_at=attained_at_of(tie),
                    entry=None,
                )
        return answered

    async def rank_entries(
        self,
        board: LeaderboardItem,
        entries: Sequence[ScoreItem],
        entry_count: Callable[[], Awaitable[int | None]],
    ) -> list[RankInfo]:
        """Ranks of entries read from the table (or just written), one per entry: each
        counted against the board's other entries. The index gives the board's total with the
        ranks; otherwise ``entry_count`` reads it, beside the COUNTs (on a write-sharded board
        its count shards are read only then)."""
        if self.index is not None:
            asks: dict[str, list[tuple[str, str | None]]] = {
                board.leaderboard_id: [
                    (e.player_id, rank_value(e.score, board.score_width, board.sort_order))
                    for e in entries
                ]
            }
            found = await _from_index(self.index.ranks(asks))
            answers = found.get(board.leaderboard_id) if found is not None else None
            if answers is not None:
                return [
                    RankInfo.of(e, a.better + 1, a.total)
                    for e, a in zip(entries, answers, strict=True)
                    if a is not None
                ]
        better, total = await asyncio.gather(
            ranks.better_counts(self.db, board, entries), entry_count()
        )
        ranked = []
        for entry in entries:
            count = better[rank_value(entry.score, board.score_width, board.sort_order)]
            # entryCount is kept by the transactions that add and take entries (in the
            # board's count shards); max() keeps the answer coherent when an entry read is
            # fresher than the board and its count.
            ranked.append(RankInfo.of(entry, count + 1, max(total or 0, count + 1)))
        return ranked

    async def window_ranks(
        self, board: LeaderboardItem, window: Sequence[ScoreItem], *, from_top: bool
    ) -> list[int]:
        """Ranks of a contiguous run of the board's entries, best first."""
        if window and not from_top and self.index is not None:
            top = window[0]
            better = await _from_index(self.index.better_counts(board, [top]))
            listed = (
                await _from_index(self.index.listed_before(board, top))
                if better is not None
                else None
            )
            if better is not None and listed is not None:
                better_than_top = next(iter(better.values()))
                # Two reads: a change between them must not list the top before its betters.
                return ranks.ranks_in_window(
                    board,
                    window,
                    better_than_top=better_than_top,
                    listed_before=max(listed, better_than_top),
                )
        return await ranks.window_ranks(self.db, board, window, from_top=from_top)
