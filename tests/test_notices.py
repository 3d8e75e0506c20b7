"""Change notices from stream records, and the feed reader's rule for a lost place: pure
functions, checked on records shaped as the table's stream (NEW_AND_OLD_IMAGES) gives them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem
from dynamo.items import Item, serialize
from dynamo.keys import Entity
from dynamo.leaderboards import (
    ENTRY_COUNT_SHARD,
    LEADERBOARD,
    PARTITIONED_ENTRY_COUNT_SHARD,
    EntryCountShard,
    LeaderboardItem,
    Period,
)
from dynamo.players import PLAYER, PlayerItem
from dynamo.scores import SCORE
from dynamo.sessions import SESSION
from rankindex.feed import START, Place, StreamInfo, lost_place
from rankindex.notices import Notice, NoticeKind, decode, encode, notices, notices_of
from rankindex.projection import project
from resolvers.dependencies import EntryCount, affected

AT = datetime(2026, 11, 26, 1, 2, 3, 456000, tzinfo=UTC)
AT_MS = 1_795_654_923_456
TIE = "0000000000001"


def _record(
    event: str, entity: Entity, old: Item | None, new: Item | None, **key: str
) -> dict[str, Any]:
    body: dict[str, Any] = {"Keys": serialize(entity.key_attributes(**key))}
    if old is not None:
        body["OldImage"] = serialize(entity.item(old))
    if new is not None:
        body["NewImage"] = serialize(entity.item(new))
    return {"eventName": event, "dynamodb": body}


def _guard(version: int, score: int, *, removed: bool = False) -> EntryGuardItem:
    return EntryGuardItem(
        player_id="ann",
        leaderboard_id="b",
        score=score,
        attained_at=AT,
        score_sk=SCORE.sk.fill(rank_value=f"{score:010d}", tie_value=TIE, player_id="ann"),
        rank_value=f"{score:010d}",
        tie_value=TIE,
        version=version,
        removed=removed,
    )


def _entry(event: str, old: EntryGuardItem | None, new: EntryGuardItem | None) -> dict[str, Any]:
    return _record(event, ENTRY_GUARD, old, new, player_id="ann", leaderboard_id="b")


def test_each_entry_change_is_one_notice_with_its_rank_values() -> None:
    first, better = _guard(1, 40), _guard(2, 70)
    removed = better.model_copy(update={"version": 3, "removed": True})
    again = _guard(4, 10)
    records = [
        _entry("INSERT", None, first),
        _entry("MODIFY", first, better),
        _entry("MODIFY", better, removed),
        _entry("MODIFY", removed, again),
        _entry("REMOVE", again, None),
        _entry("REMOVE", removed, None),
    ]
    assert notices(records) == [
        Notice(
            NoticeKind.PUT, "b", "ann", before=None, after=40, version=1, at_ms=AT_MS, fresh=True
        ),
        Notice(NoticeKind.PUT, "b", "ann", before=40, after=70, version=2, at_ms=AT_MS),
        Notice(NoticeKind.REMOVED, "b", "ann", before=70, after=None, version=3),
        # A play after a removal: the tombstone held no entry.
        Notice(
            NoticeKind.PUT, "b", "ann", before=None, after=10, version=4, at_ms=AT_MS, fresh=True
        ),
        # Erased: the guard is gone, and with it the entry it held (none for a tombstone).
        Notice(NoticeKind.ERASED, "b", "ann", before=10, after=None, version=4),
        Notice(NoticeKind.ERASED, "b", "ann", before=None, after=None, version=3),
    ]


def test_a_guard_without_its_rank_value_leaves_the_entry_before_unknown() -> None:
    """A guard written before guards carried their rank value held an entry all the same:
    its change is not one from no entry."""
    legacy = _guard(1, 40).model_copy(update={"rank_value": ""})
    [notice] = notices([_entry("MODIFY", legacy, _guard(2, 70))])
    assert (notice.before, notice.after, notice.fresh) == (None, 70, False)


def _board(**changes: Any) -> LeaderboardItem:
    board = LeaderboardItem(leaderboard_id="b", name="B", period=Period.GLOBAL, created_at=AT)
    return board.model_copy(update=changes)


def test_a_board_item_gives_a_notice_unless_only_its_entry_count_moved() -> None:
    def record(event: str, old: LeaderboardItem | None, new: LeaderboardItem | None) -> Any:
        return _record(event, LEADERBOARD, old, new, leaderboard_id="b")

    created = _board()
    counted = _board(entry_count=1)
    renamed = _board(entry_count=1, name="Best")
    assert notices_of(record("INSERT", None, created)) == [
        Notice(NoticeKind.BOARD, "b", at_ms=AT_MS)
    ]
    # A first entry counted into the board's item (as the service did before the count
    # shards, and an instance of that version still does during an upgrade): that entry's own
    # notice tells it.
    assert notices_of(record("MODIFY", created, counted)) == []
    assert notices_of(record("MODIFY", counted, renamed)) == [Notice(NoticeKind.BOARD, "b")]
    # Deleted (a periodic board's time to live ran out).
    assert notices_of(record("REMOVE", renamed, None)) == [Notice(NoticeKind.BOARD, "b")]


@pytest.mark.parametrize("partition", [None, "03"])
def test_a_count_shard_gives_no_notice_and_no_index_change(partition: str | None) -> None:
    """A first entry, a removal and an erasure each change a count shard and an entry guard in
    one transaction: the guard's notice tells of the count (its entry came or went). So on a
    board of one partition (the shard under the board's key) and on a write-sharded one (under
    a partition's)."""
    entity = ENTRY_COUNT_SHARD if partition is None else PARTITIONED_ENTRY_COUNT_SHARD

    def record(event: str, old: EntryCountShard | None, new: EntryCountShard | None) -> Any:
        key = {"leaderboard_id": "b", "shard": "07", "partition": partition or ""}
        return _record(event, entity, old, new, **key)

    one = EntryCountShard(leaderboard_id="b", shard="07", partition=partition, entry_count=1)
    two = one.model_copy(update={"entry_count": 2})
    for shard_record in (
        record("INSERT", None, one),
        record("MODIFY", one, two),
        record("REMOVE", two, None),
    ):
        assert notices_of(shard_record) == []
        assert project(shard_record) == []
    first = notices_of(_entry("INSERT", None, _guard(1, 40)))
    assert [(n.kind, n.before, n.fresh) for n in first] == [(NoticeKind.PUT, None, True)]
    assert affected(EntryCount("b"), first[0])


def test_a_player_item_gives_a_notice_only_when_its_name_changes() -> None:
    def record(event: str, old: PlayerItem | None, new: PlayerItem | None) -> Any:
        return _record(event, PLAYER, old, new, player_id="ann", email="ann@x.example")

    ann = PlayerItem(
        player_id="ann", name="Ann", email="ann@x.example", created_at=AT, updated_at=AT
    )
    played = ann.model_copy(update={"games_played": 1, "lifetime_score": 40})
    banned = played.model_copy(update={"banned_at": AT})
    later = datetime(2026, 11, 26, 2, 0, tzinfo=UTC)
    renamed = played.model_copy(update={"name": "Annie", "updated_at": later})
    assert notices_of(record("INSERT", None, ann)) == []
    assert notices_of(record("MODIFY", ann, played)) == [], "every play updates the player"
    assert notices_of(record("MODIFY", played, banned)) == [], "a ban's removals tell"
    assert notices_of(record("MODIFY", played, renamed)) == [
        Notice(NoticeKind.PLAYER, player="ann", at_ms=int(later.timestamp() * 1000))
    ]
    assert notices_of(record("REMOVE", played, None)) == [], "an erasure's removals tell"


def test_items_no_page_shows_give_no_notice() -> None:
    session = {
        "eventName": "INSERT",
        "dynamodb": {
            "Keys": serialize(SESSION.key_attributes(player_id="ann", session_id="s1")),
            "NewImage": serialize({"playerId": "ann", "sessionId": "s1"}),
        },
    }
    assert notices_of(session) == []
    assert notices_of({}) == []


@pytest.mark.parametrize(
    "notice",
    [
        Notice(NoticeKind.PUT, "b", "ann", before=None, after=40, version=1, at_ms=AT_MS),
        Notice(NoticeKind.PUT, "b", "ann", after=40, version=1, at_ms=AT_MS, fresh=True),
        Notice(NoticeKind.REMOVED, "b", "ann", before=70, version=3),
        Notice(NoticeKind.BOARD, "b"),
        Notice(NoticeKind.PLAYER, player="ann", at_ms=AT_MS),
    ],
)
def test_a_notice_survives_its_stream_entry(notice: Notice) -> None:
    fields = encode(notice)
    assert all(isinstance(v, str) for v in fields.values())
    # Redis hands fields back as bytes.
    assert decode({k.encode(): v.encode() for k, v in fields.items()}) == notice


def test_an_entry_that_is_no_notice_is_skipped() -> None:
    assert decode({b"kind": b"unknown"}) is None
    assert decode({b"other": b"field"}) is None


def _info(last: int, first: int, length: int, added: int | None) -> StreamInfo:
    return StreamInfo(last=(last, 0), first=(first, 0), length=length, added=added)


@pytest.mark.parametrize(
    ("place", "info", "lost"),
    [
        # No stream, never seen one: nothing lost.
        (START, None, False),
        # Caught up: the stream counts exactly what was read.
        (Place((5, 0), 5), _info(5, 1, 5, 5), False),
        # Behind, everything unread still held.
        (Place((3, 0), 3), _info(5, 1, 5, 5), False),
        # Trimmed past the reader's place: entries 4 and 5 went unread.
        (Place((3, 0), 3), _info(7, 6, 2, 7), True),
        # Trimmed exactly up to the reader's place: nothing unread is gone.
        (Place((3, 0), 3), _info(5, 4, 2, 5), False),
        # Emptied (XTRIM MAXLEN 0) after entries the reader never saw.
        (Place((3, 0), 3), _info(6, 0, 0, 6), True),
        # Emptied after the reader read everything.
        (Place((3, 0), 3), _info(3, 0, 0, 3), False),
        # Deleted, or lost with Redis's data.
        (Place((3, 0), 3), None, True),
        # Recreated: counted from zero again.
        (Place((3, 0), 3), _info(9, 8, 2, 2), True),
        # Restored from an older snapshot: the stream's last id is behind the reader's.
        (Place((9, 0), 9), _info(5, 1, 5, 5), True),
        # A Redis without the counters (before 7) is only checked for going back.
        (Place((3, 0), 3), _info(7, 6, 2, None), False),
    ],
)
def test_the_reader_knows_when_it_lost_its_place(
    place: Place, info: StreamInfo | None, lost: bool
) -> None:
    assert lost_place(place, info) is lost
