"""Leaderboard metadata items and their entry counts: AP9 (by id) and board creation.

A board's ``entryCount`` (players with an entry on it) is kept in count shards, items with the
sort key ``#COUNT#<shard>`` (shard 00 to 31) under the partition key of the player's Score
item: the board's own key ``LEADERBOARD#<id>`` on a board of one partition (ENTRY_COUNT_SHARD),
the player's partition ``LEADERBOARD#<id>#<partition>`` on a write-sharded board
(PARTITIONED_ENTRY_COUNT_SHARD; dynamo/scores.py). The stable hash of the player's id picks
both: its low bits the partition (hash % N), the bits above them the shard ((hash // N) % 32,
which on a board of one partition is hash % 32). So a board has 32 shards per partition key,
32·N in all, and a first entry writes one partition key of the board, its player's, whose
~1,000 write units a second its Score items and its shards share: first entries scale with N.

A first entry adds one to its player's shard, a removal takes one off it; no write touches the
board's own item, which stays as it was created (on DynamoDB, a transaction touching an item
that another one in flight holds is cancelled, so an item that every first entry wrote would
let one first entry of a board commit at a time). The count is the board item's own
``entryCount`` (0 for a board created since, the count of a board created before the shards,
which the shards then go on from) plus its shards' sum. On a board of one partition one Query
reads the item and its shards (their sort keys sort just before ``#METADATA``); on a
write-sharded board the item is read alone, and its count, only where it is needed
(:func:`count_entries`), by one Query of each partition's shards, all at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import Item, parse, serialize
from dynamo.keys import Entity
from dynamo.put_new import put_new
from dynamo.reads import query_items
from dynamo.rewards import RewardTier
from dynamo.table import Key

__all__ = [
    "COUNT_SHARDS",
    "ENTRY_COUNT_SHARD",
    "FAMILY_BOARD_ID",
    "LEADERBOARD",
    "MAX_PARTITIONS",
    "MAX_SCORE_WIDTH",
    "PARTITIONED_ENTRY_COUNT_SHARD",
    "BoardStatus",
    "EntryCountShard",
    "LeaderboardItem",
    "Operator",
    "Period",
    "SortOrder",
    "close_due",
    "count_change",
    "count_entries",
    "count_partitions",
    "count_shard",
    "count_shard_item",
    "count_shard_key",
    "count_shard_keys",
    "create_leaderboard",
    "get_leaderboard",
    "get_leaderboards",
    "is_family_board_id",
    "largest_score",
    "player_hash",
    "player_partition",
    "read_board",
    "reserved_id_message",
]

LEADERBOARD = Entity.declare(
    "Leaderboard",
    pk="LEADERBOARD#{leaderboard_id}",
    sk="#METADATA",
    gsi1=("CLOSE_DUE", "{close_due}#{leaderboard_id}"),
    gsi2=("CLOSED_BOARDS", "{closed_key}#{leaderboard_id}"),
)
ENTRY_COUNT_SHARD = Entity.declare(
    "Entry count shard", pk="LEADERBOARD#{leaderboard_id}", sk="#COUNT#{shard}"
)
PARTITIONED_ENTRY_COUNT_SHARD = Entity.declare(
    "Entry count shard (write-sharded board)",
    pk="LEADERBOARD#{leaderboard_id}#{partition}",
    sk="#COUNT#{shard}",
)

COUNT_SHARDS = 32
"""Count shards per partition key of a board (a power of two; "Why 32 count shards" in
docs/explanation/table-design.md says why): two first entries of one partition in flight together
meet on one shard one time in 32, and a partition's 32 shards (with the board's item, on a board of
one partition) are read in one Query of under 4 KB, one read unit."""

MAX_PARTITIONS = 64
"""The most partition keys a board's Score items may spread over (``partitions``, a power of
two): 64 partitions take some 64,000 write units a second."""

MAX_SCORE_WIDTH = 15
"""Scores up to 10^15 - 1 are exact as JSON/JavaScript numbers."""


def largest_score(score_width: int) -> int:
    """The largest score of ``score_width`` digits: 10^width - 1."""
    return int(10**score_width) - 1


class Period(StrEnum):
    DAILY = "DAILY"
    WEEKLY = "WEEKLY"
    SEASON = "SEASON"
    GLOBAL = "GLOBAL"


class SortOrder(StrEnum):
    DESC = "DESC"
    """Higher is better."""
    ASC = "ASC"
    """Lower is better (times, strokes)."""


class Operator(StrEnum):
    BEST = "BEST"
    """The entry is the player's best score."""
    LATEST = "LATEST"
    """The entry is the player's latest score."""
    INCREMENT = "INCREMENT"
    """The entry is the sum of the player's scores."""


class BoardStatus(StrEnum):
    LIVE = "LIVE"
    """The board takes plays (or will, from its startsAt)."""
    CLOSING = "CLOSING"
    """Its period is over and its final standings are not all written yet: it takes no play."""
    FINAL = "FINAL"
    """Its final standings are written (dynamo/closing.py) and will not change."""


def close_due(ends_at: datetime) -> str:
    """The sort key of a board awaiting its close in GSI1's ``CLOSE_DUE`` partition: its
    ``endsAt`` in epoch milliseconds, 13 digits, so that the boards due first sort first."""
    return f"{int(ends_at.timestamp() * 1000):013d}"


class LeaderboardItem(Item):
    leaderboard_id: str
    name: str
    period: Period
    sort_order: SortOrder = SortOrder.DESC
    operator: Operator = Operator.BEST
    score_width: int = 10
    min_score: int | None = None
    """The lowest score a play may enter; None when only 0 bounds it."""
    max_score: int | None = None
    """The highest score a play may enter; None when only the width bounds it."""
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    entry_count: int = 0
    """The board's ``entryCount``: its item's own plus its count shards', once counted (see
    ``counted``)."""
    counted: bool = Field(default=True, exclude=True)
    """Whether ``entry_count`` holds the count shards' (never stored): False for a
    write-sharded board read without them (``read_board(..., count=False)``), whose
    ``entry_count`` is then its item's own only; :func:`count_entries` adds them."""
    partitions: int = 1
    """How many partition keys the board's Score items spread over (a power of two up to
    MAX_PARTITIONS), fixed when the board is created: 1 keeps them all under the board's own
    (see dynamo/scores.py)."""
    family_id: str | None = None
    """The family that owns this board, for the concrete boards of a periodic family."""
    ttl: int | None = None
    """Epoch seconds after which DynamoDB may delete the board (periodic boards only)."""
    created_at: datetime
    archive_days: int | None = None
    """How many days after ``endsAt`` the board's final standings are kept; None: for ever."""
    reward_tiers: list[RewardTier] | None = None
    """What its final standings give (dynamo/rewards.py), in order: an entrant takes the first
    tier it qualifies for; None for no reward."""
    close_due: str | None = None
    """While a board with an ``endsAt`` awaits its close: :func:`close_due` of it, which puts
    the board in GSI1's ``CLOSE_DUE`` partition, where ``close-periods`` finds it. The close
    removes it with the board's index keys once the board is final."""
    closing_since: datetime | None = None
    """When its close began (dynamo/closing.py): from then on the board takes no play."""
    close_phase: str | None = None
    """The close's step while it runs: COUNTS, ENTRIES, RESULTS."""
    close_cursor: str | None = None
    """How far the close's RESULTS step went (JSON text; dynamo/closing.py)."""
    final_count: int | None = None
    """The entrants of its final standings, counted once its entries were frozen."""
    closed_at: datetime | None = None
    """When its final standings were complete."""
    closed_key: str | None = None
    """Once final: ``closedAt`` in epoch milliseconds (13 digits), which puts the board in
    GSI2's ``CLOSED_BOARDS`` partition, the boards in the order they closed (the results
    feed, dynamo/result_feed.py)."""

    @property
    def width_max(self) -> int:
        """The largest score the board's width holds: 10^scoreWidth - 1."""
        return largest_score(self.score_width)

    @property
    def bounded(self) -> bool:
        """Whether the board has a minScore or a maxScore of its own."""
        return self.min_score is not None or self.max_score is not None

    @property
    def bounds(self) -> tuple[int, int]:
        """The lowest and highest score a play may enter: minScore (0 when unset) and
        maxScore (the width's largest when unset)."""
        low = 0 if self.min_score is None else self.min_score
        high = self.width_max if self.max_score is None else self.max_score
        return low, high

    def admits(self, score: int) -> bool:
        """Whether a play's score lies within the board's bounds (on an INCREMENT board, the
        amount the play adds; its total is held to the width alone)."""
        low, high = self.bounds
        return low <= score <= high

    def is_open(self, at: datetime) -> bool:
        """Whether a score attained at ``at`` may enter this board: within its window, and its
        close has not begun."""
        return self.closing_since is None and self.within(at)

    def within(self, at: datetime) -> bool:
        """Whether ``at`` is within the board's window: startsAt <= at < endsAt."""
        if self.starts_at is not None and at < self.starts_at:
            return False
        return self.ends_at is None or at < self.ends_at

    def status(self, at: datetime) -> BoardStatus:
        """LIVE until ``endsAt`` (for ever without one), CLOSING from then until its final
        standings are written, FINAL after."""
        if self.closed_at is not None:
            return BoardStatus.FINAL
        if self.closing_since is not None or (self.ends_at is not None and at >= self.ends_at):
            return BoardStatus.CLOSING
        return BoardStatus.LIVE


FAMILY_BOARD_ID = re.compile(
    r"(?P<family>.+)\.(?:daily\.\d{4}-\d{2}-\d{2}|weekly\.\d{4}-W\d{2}|season\.\d+)"
)
"""The form of a periodic family's board ids (``<familyId>.daily.2026-11-21``,
``<familyId>.weekly.2026-W47``, ``<familyId>.season.3``): reserved for the families."""


def is_family_board_id(leaderboard_id: str) -> bool:
    return FAMILY_BOARD_ID.fullmatch(leaderboard_id) is not None


class EntryCountShard(Item):
    """One of a board's count shards: the first entries of the players whose shard it is, less
    the entries of theirs taken off the board (it may go below zero on a board created before
    the shards, whose count its own item holds)."""

    leaderboard_id: str
    shard: str
    """Two digits, 00 to COUNT_SHARDS - 1."""
    partition: str | None = None
    """On a write-sharded board, the partition whose players it counts (two digits, as its
    partition key ends); None on a board of one partition."""
    entry_count: int = 0
    ttl: int | None = None
    """The board's own, for periodic boards: the shard expires with the board."""


def player_hash(player_id: str) -> int:
    """A stable hash of a player's id (the same in every process, unlike Python's ``hash``):
    BLAKE2b, 64 bits. It picks the player's partition on a write-sharded board and its count
    shard."""
    return int.from_bytes(hashlib.blake2b(player_id.encode(), digest_size=8).digest(), "big")


def player_partition(player_id: str, partitions: int) -> str:
    """The player's partition on a board of ``partitions`` partitions (two digits): the low
    bits of its hash (``partitions`` is a power of two), which place its Score item and its
    count shard."""
    return f"{player_hash(player_id) % partitions:02d}"


def count_shard(player_id: str, partitions: int) -> str:
    """The player's count shard on a board of ``partitions`` partitions (two digits): the bits
    of its hash above those of its partition, ``(hash // partitions) % COUNT_SHARDS``, so that
    the players of one partition spread over all of its shards (on a board of one partition,
    ``hash % COUNT_SHARDS``)."""
    return f"{player_hash(player_id) // partitions % COUNT_SHARDS:02d}"


def _count_shard(
    leaderboard_id: str, player_id: str, partitions: int
) -> tuple[Entity, dict[str, str]]:
    """The entity of the player's count shard of the board, and the values of its key."""
    values = {"leaderboard_id": leaderboard_id, "shard": count_shard(player_id, partitions)}
    if partitions == 1:
        return ENTRY_COUNT_SHARD, values
    values["partition"] = player_partition(player_id, partitions)
    return PARTITIONED_ENTRY_COUNT_SHARD, values


def count_shard_key(leaderboard_id: str, player_id: str, partitions: int) -> Key:
    """The key of the player's count shard of a board of ``partitions`` partitions: under the
    board's own partition key on a board of one, under the player's partition otherwise."""
    entity, values = _count_shard(leaderboard_id, player_id, partitions)
    return entity.key(**values)


def count_shard_item(leaderboard_id: str, player_id: str, partitions: int) -> str:
    """The player's count shard of the board, as one string (``pk sk``): a key of the
    process's queue of first entries per shard (``Db.counts``)."""
    return " ".join(count_shard_key(leaderboard_id, player_id, partitions))


def count_shard_keys(board: LeaderboardItem) -> list[tuple[dict[str, str], dict[str, str]]]:
    """Every count shard of the board, whether a player counted in it yet or not: its key
    attributes and the plain attributes it holds (``leaderboardId``, ``shard`` and on a
    write-sharded board ``partition``), 32 per partition key, 32·N in all."""
    found: list[tuple[dict[str, str], dict[str, str]]] = []
    for partition in range(board.partitions):
        for shard in range(COUNT_SHARDS):
            values = {"leaderboard_id": board.leaderboard_id, "shard": f"{shard:02d}"}
            entity = ENTRY_COUNT_SHARD
            if board.partitions > 1:
                values["partition"] = f"{partition:02d}"
                entity = PARTITIONED_ENTRY_COUNT_SHARD
            plain = {"leaderboardId": board.leaderboard_id, "shard": values["shard"]}
            if "partition" in values:
                plain["partition"] = values["partition"]
            found.append((entity.key_attributes(**values), plain))
    return found


def count_partitions(board: LeaderboardItem) -> list[str]:
    """The partition keys of a write-sharded board's count shards, in partition order (the
    keys of its Score items); none for a board of one partition, whose shards its own Query
    reads with its item."""
    if board.partitions == 1:
        return []
    return [
        PARTITIONED_ENTRY_COUNT_SHARD.pk.fill(
            leaderboard_id=board.leaderboard_id, partition=f"{n:02d}"
        )
        for n in range(board.partitions)
    ]


def count_change(
    table: str,
    leaderboard_id: str,
    player_id: str,
    delta: int,
    *,
    partitions: int,
    ttl: int | None,
) -> dict[str, Any]:
    """The transaction item that adds ``delta`` (1 for a first entry, -1 for an entry taken
    off) to the player's count shard of the board (of ``partitions`` partitions), creating the
    shard if need be (with the board's ``ttl``). What makes the count exact is the entry
    guard's condition in the same transaction, which lets one change of the player's entry
    through; a first entry is also conditional on the shard not being frozen by the board's
    close (dynamo/closing.py), which freezes every shard before it counts the entrants."""
    entity, key_values = _count_shard(leaderboard_id, player_id, partitions)
    names = {"#board": "leaderboardId", "#shard": "shard", "#count": "entryCount"}
    values: dict[str, Any] = {
        ":board": leaderboard_id,
        ":shard": key_values["shard"],
        ":delta": delta,
    }
    assign = "#board = :board, #shard = :shard"
    if "partition" in key_values:
        names["#partition"] = "partition"
        values[":partition"] = key_values["partition"]
        assign += ", #partition = :partition"
    if ttl is not None:
        names["#ttl"] = "ttl"
        values[":ttl"] = ttl
        assign += ", #ttl = :ttl"
    update: dict[str, Any] = {
        "TableName": table,
        "Key": serialize(entity.key_attributes(**key_values)),
        "UpdateExpression": f"SET {assign} ADD #count :delta",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": serialize(values),
    }
    if delta > 0:
        update["ConditionExpression"] = "attribute_not_exists(frozen)"
    return {"Update": update}


async def get_leaderboard(
    db: Db, leaderboard_id: str, *, count: bool = True
) -> LeaderboardItem | None:
    """AP9 for one id (see :func:`read_board`)."""
    return (await get_leaderboards(db, [leaderboard_id], count=count))[0]


async def get_leaderboards(
    db: Db, ids: Sequence[str], *, consistent: bool = False, count: bool = True
) -> list[LeaderboardItem | None]:
    """AP9 for several ids: one result per id, in order, None where missing, each board as
    :func:`read_board` reads it (with ``count``, with its ``entryCount``); ``consistent``: with
    ConsistentRead."""
    unique = list(dict.fromkeys(ids))
    found = await asyncio.gather(
        *(read_board(db, i, consistent=consistent, count=count) for i in unique)
    )
    by_id = dict(zip(unique, found, strict=True))
    return [by_id[i] for i in ids]


async def read_board(
    db: Db, leaderboard_id: str, *, consistent: bool = False, count: bool = True
) -> LeaderboardItem | None:
    """AP9: the board's item and the count shards under its own key in one Query (the sort
    keys from the shards' ``#COUNT#`` to the item's ``#METADATA``, which no other item's falls
    between); None when it has no item. A board of one partition comes with its
    ``entryCount`` summed. A write-sharded board's shards are under its partitions' keys:
    with ``count``, they are read then (:func:`count_entries`); without, the board comes
    without them (``counted`` False), which is all a reader of its rules needs."""
    raw = await query_items(
        db,
        key_condition="pk = :pk AND sk BETWEEN :shards AND :board",
        values={
            ":pk": LEADERBOARD.pk.fill(leaderboard_id=leaderboard_id),
            ":shards": ENTRY_COUNT_SHARD.sk.prefix,
            ":board": LEADERBOARD.sk.fill(),
        },
        limit=COUNT_SHARDS + 1,
        descending=False,
        consistent=consistent,
    )
    boards = [parse(LeaderboardItem, i) for i in raw if LEADERBOARD.holds(_key(i))]
    if not boards:
        return None
    shards = _shards_sum(raw, ENTRY_COUNT_SHARD)
    board = boards[0].model_copy(
        update={
            "entry_count": boards[0].entry_count + shards,
            "counted": boards[0].partitions == 1,
        }
    )
    return await count_entries(db, board, consistent=consistent) if count else board


async def count_entries(
    db: Db, board: LeaderboardItem, *, consistent: bool = False
) -> LeaderboardItem:
    """``board`` with its ``entryCount``: as it is when it holds it (``counted``), else with
    the count shards of each of its partitions added, one Query per partition key (sort keys
    beginning ``#COUNT#``), all at once (a request's budget sends at most ``max_in_flight``
    of them at a time: dynamo/budget.py); ``consistent``: with ConsistentRead."""
    if board.counted:
        return board
    found = await asyncio.gather(
        *(
            query_items(
                db,
                key_condition="pk = :pk AND begins_with(sk, :shards)",
                values={":pk": pk, ":shards": PARTITIONED_ENTRY_COUNT_SHARD.sk.prefix},
                limit=COUNT_SHARDS + 1,
                descending=False,
                consistent=consistent,
            )
            for pk in count_partitions(board)
        )
    )
    shards = sum(_shards_sum(raw, PARTITIONED_ENTRY_COUNT_SHARD) for raw in found)
    return board.model_copy(update={"entry_count": board.entry_count + shards, "counted": True})


def _shards_sum(raw: Sequence[dict[str, Any]], entity: Entity) -> int:
    """The sum of the count shards of ``entity`` among raw items."""
    return sum(parse(EntryCountShard, i).entry_count for i in raw if entity.holds(_key(i)))


def _key(raw: dict[str, Any]) -> dict[str, str]:
    return {"pk": raw["pk"]["S"], "sk": raw["sk"]["S"]}


def reserved_id_message(leaderboard_id: str) -> str:
    """Why a board may not be created with an id of the form of a family's boards."""
    return (
        f"id {leaderboard_id!r} has the form <family>.daily.<date>, "
        "<family>.weekly.<year>-W<week> or <family>.season.<n>, which is reserved for "
        "the boards of leaderboard families"
    )


async def create_leaderboard(db: Db, board: LeaderboardItem) -> LeaderboardItem:
    """Write a new board; its id, width and sort order are fixed from then on. The ids of
    the form of a family's boards are reserved for the families."""
    if is_family_board_id(board.leaderboard_id):
        raise LeaderboardError(
            ErrorCode.INVALID_ID, reserved_id_message(board.leaderboard_id), Subject.LEADERBOARD
        )
    if not await put_new(db, LEADERBOARD.item(board), f"leaderboard {board.leaderboard_id!r}"):
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_EXISTS,
            f"leaderboard {board.leaderboard_id!r} already exists",
            Subject.LEADERBOARD,
        )
    return board
