"""Entry guards: one internal item per (player, board) holding the player's current entry.

Keys::

    Entry guard   pk = PLAYER#<playerId>   sk = ENTRY#<leaderboardId>

The guard stores the entry's score, when it was attained, its session and the sort key of its
Score item. Submissions read it, decide, and write conditionally on it still holding what was
read, which is what keeps "only the best" exact when submissions race.
"""

from __future__ import annotations

from datetime import datetime

from dynamo.table import Item, Key

__all__ = ["EntryItem", "entry_key"]

PK = "PLAYER#{player_id}"
SK = "ENTRY#{leaderboard_id}"


class EntryItem(Item):
    player_id: str
    leaderboard_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None
    score_sk: str


def entry_key(player_id: str, leaderboard_id: str) -> Key:
    return (PK.format(player_id=player_id), SK.format(leaderboard_id=leaderboard_id))
