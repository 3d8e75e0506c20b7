"""Where ranks come from: the rank index when it can answer, the table's COUNTs otherwise.

Both give the same numbers (standard competition ranks); the index answers in O(log N) and
the COUNT reads every better entry. The index declines, and the table answers, for a board
it does not hold completely or while its projector is behind the stream.
"""

from __future__ import annotations

from collections.abc import Sequence

from dynamo import ranks
from dynamo.leaderboards import LeaderboardItem
from dynamo.scores import ScoreItem
from dynamo.table import Db
from rankindex.index import RankIndex

__all__ = ["RankSource"]


class RankSource:
    def __init__(self, db: Db, index: RankIndex | None) -> None:
        self.db = db
        self.index = index

    async def better_counts(
        self, board: LeaderboardItem, entries: Sequence[ScoreItem]
    ) -> dict[str, int]:
        """For each entry's rank value: how many entries are strictly better."""
        if self.index is not None:
            found = await self.index.better_counts(board, entries)
            if found is not None:
                return found
        return await ranks.better_counts(self.db, board, entries)

    async def window_ranks(
        self, board: LeaderboardItem, window: Sequence[ScoreItem], *, from_top: bool
    ) -> list[int]:
        """Ranks of a contiguous run of the board's entries, best first."""
        if window and not from_top and self.index is not None:
            top = window[0]
            better = await self.index.better_counts(board, [top])
            listed = await self.index.listed_before(board, top)
            if better is not None and listed is not None:
                return ranks.ranks_in_window(
                    board,
                    window,
                    better_than_top=next(iter(better.values())),
                    listed_before=listed,
                )
        return await ranks.window_ranks(self.db, board, window, from_top=from_top)
