"""From stream records to change notices: a pure function, like the index's projection.

A notice tells every instance that something a page may show has changed: an entry put on a
board, removed by an operator or erased with its player, a board's own item, or a player's
name. It carries enough for a reader to judge whether a cached top page can be affected (the
entry's rank value before and after) and, where the item holds one, when the change was made
(for measuring the feed's delay). Notices are hints: a reader re-reads the table, so a notice
repeated or reordered changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from dynamo.entry_guards import ENTRY_GUARD
from dynamo.items import deserialize
from dynamo.leaderboards import LEADERBOARD
from dynamo.players import PLAYER

__all__ = ["Notice", "NoticeKind", "decode", "encode", "notices", "notices_of"]

_COUNTERS = frozenset({"entryCount"})
"""Board attributes whose change always comes with an entry's (and so its own notice): the
count a board's item held before the count shards, which an instance of that version still
changes during an upgrade. Count shards (dynamo/leaderboards.py) give no notice at all: each
of their changes is a first entry's or a removal's, told by the entry guard's notice."""


class NoticeKind(StrEnum):
    PUT = "put"
    """An entry was written (a new entry or a changed one)."""
    REMOVED = "removed"
    """An operator took the entry off the board (a removal, or a ban)."""
    ERASED = "erased"
    """The player's entry guard is gone: its player was erased, or the board expired."""
    BOARD = "board"
    """The board's own item was created, changed or deleted."""
    PLAYER = "player"
    """The player's name changed: every page showing the player is affected."""


@dataclass(frozen=True)
class Notice:
    kind: NoticeKind
    board: str | None = None
    """None for a player's notice."""
    player: str | None = None
    before: int | None = None
    """The entry's rank value before the change (None: no entry before)."""
    after: int | None = None
    """The entry's rank value after the change (None: no entry after)."""
    version: int | None = None
    """The entry guard's version after the change."""
    at_ms: int | None = None
    """Epoch ms the change was made, when the item records it."""
    fresh: bool = False
    """True when the board held no entry of the player before the change (no entry guard,
    or a removed one's); False when it did, or may have (a guard written before guards
    carried their rank value leaves ``before`` None)."""


def notices_of(record: Mapping[str, Any]) -> list[Notice]:
    """The notices of one stream record (none for items no page shows)."""
    body = record.get("dynamodb", {})
    keys = body.get("Keys", {})
    key = {"pk": keys.get("pk", {}).get("S", ""), "sk": keys.get("sk", {}).get("S", "")}
    event = str(record.get("eventName", ""))
    old = deserialize(body.get("OldImage", {}))
    new = deserialize(body.get("NewImage", {}))
    if ENTRY_GUARD.holds(key):
        return [_entry(event, old, new)]
    if LEADERBOARD.holds(key):
        return _board(event, old, new)
    if PLAYER.holds(key):
        return _player(old, new)
    return []


def notices(records: Iterable[Mapping[str, Any]]) -> list[Notice]:
    return [notice for record in records for notice in notices_of(record)]


def _entry(event: str, old: dict[str, Any], new: dict[str, Any]) -> Notice:
    image = new or old
    if event == "REMOVE":
        kind = NoticeKind.ERASED
    elif new.get("removed"):
        kind = NoticeKind.REMOVED
    else:
        kind = NoticeKind.PUT
    return Notice(
        kind=kind,
        board=str(image.get("leaderboardId", "")),
        player=str(image.get("playerId", "")),
        before=_rank_value(old),
        after=_rank_value(new),
        version=_int(image.get("version")),
        at_ms=_epoch_ms(new.get("attainedAt")) if kind is NoticeKind.PUT else None,
        fresh=kind is NoticeKind.PUT and (not old or bool(old.get("removed"))),
    )


def _board(event: str, old: dict[str, Any], new: dict[str, Any]) -> list[Notice]:
    if event == "MODIFY" and _without_counters(old) == _without_counters(new):
        return []
    image = new or old
    at = _epoch_ms(new.get("createdAt")) if event == "INSERT" else None
    return [Notice(kind=NoticeKind.BOARD, board=str(image.get("leaderboardId", "")), at_ms=at)]


def _player(old: dict[str, Any], new: dict[str, Any]) -> list[Notice]:
    if not old or not new or old.get("name") == new.get("name"):
        return []  # a new player is on no board; an erased one left its boards first
    at = _epoch_ms(new.get("updatedAt"))
    return [Notice(kind=NoticeKind.PLAYER, player=str(new.get("playerId", "")), at_ms=at)]


def _without_counters(image: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in image.items() if k not in _COUNTERS}


def _rank_value(image: Mapping[str, Any]) -> int | None:
    """The rank value of the entry an entry guard image holds; None for no image, a
    tombstone, or a guard written before guards carried their rank value."""
    if not image or image.get("removed") or not image.get("rankValue"):
        return None
    return _int(image["rankValue"])


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _epoch_ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        return None


_FIELDS = ("board", "player", "before", "after", "version", "at_ms")


def encode(notice: Notice) -> dict[str, str]:
    """A notice as the fields of a Redis stream entry (absent values left out)."""
    fields = {"kind": notice.kind.value}
    for name in _FIELDS:
        value = getattr(notice, name)
        if value is not None:
            fields[name] = str(value)
    if notice.fresh:
        fields["fresh"] = "1"
    return fields


def decode(fields: Mapping[Any, Any]) -> Notice | None:
    """A notice from a stream entry's fields; None for an entry that is not one."""
    text = {_text(k): _text(v) for k, v in fields.items()}
    try:
        kind = NoticeKind(text.get("kind", ""))
    except ValueError:
        return None
    return Notice(
        kind=kind,
        board=text.get("board"),
        player=text.get("player"),
        before=_int(text.get("before")),
        after=_int(text.get("after")),
        version=_int(text.get("version")),
        at_ms=_int(text.get("at_ms")),
        fresh=text.get("fresh") == "1",
    )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
