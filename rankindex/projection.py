"""From stream records to index changes: a pure function, the same on AWS Lambda and locally.

Only entry guards feed the index. A guard is one item per (player, board), so all of its
changes sit in one shard in order, and each carries a version that grows with every write:
applying a change only when its version is newer than the one applied makes replays,
repeats and reordering across shards harmless. A board's metadata insert tells that the
index has seen the board from its start.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem
from dynamo.items import deserialize
from dynamo.leaderboards import LEADERBOARD

__all__ = ["BoardCreated", "Change", "Forget", "Put", "Remove", "project", "project_all"]


@dataclass(frozen=True)
class Put:
    board: str
    player: str
    version: int
    tie: str
    """The entry's tie value (``dynamo.scores.tie_value``): its member is
    ``rankindex.keys.member(tie, player)``."""
    score: int
    expires_at: int | None
    """Epoch seconds: the board's ttl, for periodic boards."""
    played_ms: int


@dataclass(frozen=True)
class Remove:
    board: str
    player: str
    version: int


@dataclass(frozen=True)
class Forget:
    """The entry guard is gone (an erasure deleted it, or its board's time to live ran out):
    the index keeps nothing of the player on the board, not even the version it saw last.
    A guard written afterwards starts its versions again."""

    board: str
    player: str


@dataclass(frozen=True)
class BoardCreated:
    board: str
    expires_at: int | None = None
    """Epoch seconds: the board's ttl, for periodic boards."""


Change = Put | Remove | Forget | BoardCreated


def _epoch_ms(entry: EntryGuardItem) -> int:
    return int(entry.attained_at.timestamp() * 1000)


def project(record: Mapping[str, Any]) -> list[Change]:
    """The index changes of one stream record (none for items the index does not hold)."""
    body = record.get("dynamodb", {})
    keys = body.get("Keys", {})
    key = {"pk": keys.get("pk", {}).get("S", ""), "sk": keys.get("sk", {}).get("S", "")}
    event = record.get("eventName")
    if LEADERBOARD.holds(key):
        image = body.get("NewImage")
        if event == "INSERT" and image:
            board = deserialize(image)
            ttl = board.get("ttl")
            return [BoardCreated(str(board["leaderboardId"]), int(ttl) if ttl else None)]
        return []
    if not ENTRY_GUARD.holds(key):
        return []
    if event == "REMOVE":
        old = EntryGuardItem.model_validate(deserialize(body.get("OldImage", {})))
        return [Forget(old.leaderboard_id, old.player_id)]
    new = EntryGuardItem.model_validate(deserialize(body.get("NewImage", {})))
    if new.removed:
        return [Remove(new.leaderboard_id, new.player_id, new.version)]
    if not new.rank_value:
        return []  # written before guards carried their rank value; a rebuild covers it
    return [
        Put(
            board=new.leaderboard_id,
            player=new.player_id,
            version=new.version,
            tie=new.tie_value,
            score=int(new.rank_value),
            expires_at=new.ttl,
            played_ms=_epoch_ms(new),
        )
    ]


def project_all(records: Iterable[Mapping[str, Any]]) -> list[Change]:
    return [change for record in records for change in project(record)]
