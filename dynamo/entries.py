"""Entry guards: one internal item per (player, board) holding the player's current entry.

Keys::

    Entry guard   pk = PLAYER#<playerId>   sk = ENTRY#<leaderboardId>

The guard stores the entry's score, when it was attained, its session and the sort key of its
Score item. Submissions read it, decide, and write conditionally on it still holding what was
read, which is what keeps "only the best" exact when submissions race.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dynamo.scores import ScoreItem, best_score
from dynamo.table import Db, Item, Key, batch_get, parse

__all__ = ["EntryItem", "as_score", "current_entries", "entry_key", "is_entry_key"]

PK = "PLAYER#{player_id}"
SK = "ENTRY#{leaderboard_id}"


class EntryItem(Item):
    player_id: str
    leaderboard_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None
    score_sk: str
    rank_value: str = ""
    """The entry's rank value (see dynamo.scores), for readers of the table's stream."""
    tie_value: str = ""
    version: int = 0
    """Counts the guard's writes: orders its changes for readers of the table's stream."""
    ttl: int | None = None


def entry_key(player_id: str, leaderboard_id: str) -> Key:
    return (PK.format(player_id=player_id), SK.format(leaderboard_id=leaderboard_id))


def is_entry_key(pk: str, sk: str) -> bool:
    """Whether a key is an entry guard's (for readers of the table's stream)."""
    return pk.startswith(PK.split("{")[0]) and sk.startswith(SK.split("{")[0])


def as_score(entry: EntryItem) -> ScoreItem:
    return ScoreItem(
        leaderboard_id=entry.leaderboard_id,
        player_id=entry.player_id,
        score=entry.score,
        attained_at=entry.attained_at,
        session_id=entry.session_id,
        ttl=entry.ttl,
        version=entry.version,
    )


async def current_entries(db: Db, pairs: Sequence[tuple[str, str]]) -> list[ScoreItem | None]:
    """Entries by (playerId, leaderboardId), one result per pair, in order, None where missing.

    One pair is AP4 (a GSI1 Query); several are read from their entry guards in one
    BatchGetItem per 100, which holds the same data.
    """
    if len(pairs) == 1:
        return [await best_score(db, *pairs[0])]
    found = await batch_get(db, [entry_key(p, b) for p, b in pairs])
    return [
        as_score(parse(EntryItem, found[entry_key(p, b)])) if entry_key(p, b) in found else None
        for p, b in pairs
    ]
