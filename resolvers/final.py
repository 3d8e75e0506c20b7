"""A FINAL board answers from its final standings.

Once a board's close is complete, its results (dynamo/results.py) hold every entrant's entry
as it was frozen, with its position, rank and the total of entrants. The board's live entries
are the same entries, frozen, but they expire with the board's ``retentionDays`` while the
results are kept ``archiveDays`` (or for ever). So a FINAL board's entries, ranks and count
are read from its results: its ``entryCount`` is its ``finalCount``, its ``topScores`` its
final standings, a player's rank there its result's rank and total. An entry made from a
result (:func:`final_entry`) is the entry as it was frozen.
"""

from __future__ import annotations

from dynamo.leaderboards import LeaderboardItem
from dynamo.results import ResultItem
from dynamo.scores import ScoreItem
from resolvers.rank_source import RankInfo

__all__ = ["final_count", "final_entry", "final_rank", "is_final"]


def is_final(board: LeaderboardItem) -> bool:
    """Whether the board's close is complete (status FINAL, whatever the time)."""
    return board.closed_at is not None


def final_count(board: LeaderboardItem) -> int:
    """A FINAL board's entrants, as its close counted them."""
    return board.final_count or 0


def final_entry(result: ResultItem) -> ScoreItem:
    """The entry a result holds, as it was frozen."""
    return ScoreItem(
        leaderboard_id=result.leaderboard_id,
        player_id=result.player_id,
        score=result.score,
        attained_at=result.attained_at,
        session_id=result.session_id,
        metadata=result.metadata,
    )


def final_rank(result: ResultItem) -> RankInfo:
    """A result's rank and total, with its entry."""
    return RankInfo(
        rank=result.rank,
        total=result.total,
        player_id=result.player_id,
        leaderboard_id=result.leaderboard_id,
        attained_at=result.attained_at,
        entry=final_entry(result),
    )
