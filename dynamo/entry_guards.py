"""Entry guards: one internal item per (player, board) holding the player's current entry.

The guard (keys declared below) stores the entry's score, when it was attained, its session and
the key of its Score item (its sort key, and on a write-sharded board its partition key), so
that a change or a removal of the entry finds the Score item from the guard alone.
Submissions read it, decide, and write conditionally on it still holding what was read, which
is what keeps "only the best" exact when submissions race.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from datetime import datetime
from typing import Any

from dynamo.db import Db
from dynamo.items import Item, parse, serialize
from dynamo.keys import Entity
from dynamo.leaderboards import LeaderboardItem
from dynamo.metadata import Metadata
from dynamo.reads import batch_get, get_items
from dynamo.scores import SCORE, ScoreItem, player_entry, score_partition, sort_values
from dynamo.table import Key

__all__ = [
    "ENTRY_GUARD",
    "EntryGuardItem",
    "as_score",
    "current_entries",
    "current_guards",
    "guard_for",
    "player_guards",
]

ENTRY_GUARD = Entity.declare("Entry guard", pk="PLAYER#{player_id}", sk="ENTRY#{leaderboard_id}")


class EntryGuardItem(Item):
    player_id: str
    leaderboard_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None
    score_sk: str
    score_pk: str | None = None
    """The partition key of the entry's Score item on a write-sharded board; None on a board
    of one partition, whose Score items are under its own (``LEADERBOARD#<id>``)."""
    rank_value: str = ""
    """The entry's rank value (see dynamo.scores), for readers of the table's stream."""
    tie_value: str = ""
    version: int = 0
    """Counts the guard's writes: orders its changes for readers of the table's stream."""
    ttl: int | None = None
    removed: bool = False
    """True once an operator removed the entry: the guard stays, holding the removed entry
    and its version, so that the player's next entry on the board continues its versions
    (readers of the stream apply a change only when it is newer than the last)."""
    metadata: Metadata | None = None
    """The entry's metadata, kept when a play adds to an INCREMENT total it did not attain."""
    frozen: bool | None = None
    """True once the board's close froze the entry (dynamo/closing.py; None, not stored,
    before): no play, removal or ban changes it from then on (their conditions require its
    absence); an erasure still deletes it."""

    @property
    def score_key(self) -> Key:
        """The key of the entry's Score item."""
        pk = self.score_pk or SCORE.pk.fill(leaderboard_id=self.leaderboard_id)
        return pk, self.score_sk


def guard_for(board: LeaderboardItem, entry: ScoreItem, version: int) -> EntryGuardItem:
    """The entry guard holding ``entry`` on ``board``, at its ``version``-th write."""
    sort = sort_values(board, entry)
    return EntryGuardItem(
        player_id=entry.player_id,
        leaderboard_id=board.leaderboard_id,
        score=entry.score,
        attained_at=entry.attained_at,
        session_id=entry.session_id,
        score_sk=SCORE.sk.fill(player_id=entry.player_id, **sort),
        score_pk=score_partition(board, entry.player_id) if board.partitions > 1 else None,
        rank_value=sort["rank_value"],
        tie_value=sort["tie_value"],
        version=version,
        ttl=board.ttl,
        metadata=entry.metadata,
    )


def as_score(entry: EntryGuardItem) -> ScoreItem:
    return ScoreItem(
        leaderboard_id=entry.leaderboard_id,
        player_id=entry.player_id,
        score=entry.score,
        attained_at=entry.attained_at,
        session_id=entry.session_id,
        ttl=entry.ttl,
        version=entry.version,
        metadata=entry.metadata,
    )


async def current_entries(db: Db, pairs: Sequence[tuple[str, str]]) -> list[ScoreItem | None]:
    """Entries by (playerId, leaderboardId), one result per pair, in order, None where missing.

    One pair is AP4 (a GSI1 Query); several are read from their entry guards in one
    BatchGetItem per 100, which holds the same data.
    """
    if len(pairs) == 1:
        return [await player_entry(db, *pairs[0])]
    guards = await get_items(
        db, EntryGuardItem, [ENTRY_GUARD.key(player_id=p, leaderboard_id=b) for p, b in pairs]
    )
    return [as_score(g) if g is not None and not g.removed else None for g in guards]


async def player_guards(
    db: Db, player_id: str, *, page_size: int = 100, after_board: str | None = None
) -> AsyncGenerator[list[EntryGuardItem], None]:
    """Every entry guard of the player (its entries, and the tombstones of removed ones), in
    pages: AP5's entries read from the player's own partition with ConsistentRead, so that
    an entry written before the read began is in it. ``after_board``: only the guards of the
    boards whose ids sort after that one."""
    pk = ENTRY_GUARD.pk.fill(player_id=player_id)
    kwargs: dict[str, Any] = {
        "TableName": db.table,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
        "ExpressionAttributeValues": serialize({":pk": pk, ":prefix": ENTRY_GUARD.sk.prefix}),
        "ConsistentRead": True,
        "Limit": page_size,
    }
    if after_board is not None:
        start = ENTRY_GUARD.key_attributes(player_id=player_id, leaderboard_id=after_board)
        kwargs["ExclusiveStartKey"] = serialize(start)
    while True:
        response = await db.query(**kwargs)
        yield [parse(EntryGuardItem, raw) for raw in response.get("Items", [])]
        last = response.get("LastEvaluatedKey")
        if not last:
            return
        kwargs["ExclusiveStartKey"] = last


async def current_guards(db: Db, guards: Sequence[EntryGuardItem]) -> list[EntryGuardItem]:
    """The guards as they stand now (read consistently), in order; those gone are left out."""
    keys = [ENTRY_GUARD.key(player_id=g.player_id, leaderboard_id=g.leaderboard_id) for g in guards]
    found = await batch_get(db, keys, consistent=True)
    return [parse(EntryGuardItem, found[k]) for k in keys if k in found]
