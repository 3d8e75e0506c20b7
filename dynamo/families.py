"""Leaderboard families: one definition owning a concrete board per day, ISO week or season.

A family's concrete boards are ordinary Leaderboard items whose id is derived from the period
they cover: ``<familyId>.daily.2026-11-21``, ``<familyId>.weekly.2026-W47`` (ISO week) or
``<familyId>.season.3``. Days and weeks follow the family's time zone; seasons are fixed-length
periods counted from the family's ``seasonStart``. A concrete board is created by the first
submission of its period, and carries a ``ttl`` ``retentionDays`` after it ends so DynamoDB
expires it (and its entries) by itself.

A family's definition never changes but for ``partitions``, how many partition keys its boards
created from then on spread their Score items over (dynamo/scores.py): a studio raises it
ahead of a busier period. A board keeps the partitions it was created with. Each process serves
the rest of the definition from memory once read; where the partitions decide something (the
creation of a board, a client asking for them) the family's item is read again, consistently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from botocore.exceptions import ClientError

from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import Item, parse, serialize
from dynamo.keys import Entity
from dynamo.leaderboards import (
    LEADERBOARD,
    LeaderboardItem,
    Operator,
    Period,
    SortOrder,
    close_due,
)
from dynamo.put_new import put_new
from dynamo.reads import batch_get, get_items
from dynamo.rewards import RewardTier

__all__ = [
    "FAMILY",
    "MAX_FAMILY_ID",
    "MAX_RETENTION_DAYS",
    "FamilyItem",
    "PeriodWindow",
    "concrete_board",
    "create_family",
    "create_family_board",
    "get_families",
    "nearby_board_ids",
    "period_window",
    "read_family",
    "set_family_partitions",
]

FAMILY = Entity.declare("Leaderboard family", pk="FAMILY#{family_id}", sk="#METADATA")

MAX_SEASON_DAYS = 3650
"""Longest season of a family of fixed-length seasons, in days."""
MAX_RETENTION_DAYS = 3650
"""How long a family's boards are kept after they end, at most."""
MAX_FAMILY_ID = 40
"""Leaves room for the period suffix within the 64 characters of a board id."""


class FamilyItem(Item):
    family_id: str
    name: str
    period: Period
    timezone: str = "UTC"
    sort_order: SortOrder = SortOrder.DESC
    operator: Operator = Operator.BEST
    score_width: int = 10
    min_score: int | None = None
    """The lowest score a play may enter on the family's boards; None when only 0 bounds it."""
    max_score: int | None = None
    """The highest score a play may enter on the family's boards; None when only the width
    bounds it."""
    season_start: datetime | None = None
    season_days: int | None = None
    retention_days: int = 30
    archive_days: int | None = None
    """How many days after a board's end its final standings are kept; None: for ever."""
    reward_tiers: list[RewardTier] | None = None
    """The reward tiers of the family's boards (dynamo/rewards.py)."""
    partitions: int = 1
    """The partitions of the family's boards created from now on (see the module's
    description); the one attribute of a family that changes."""
    created_at: datetime

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


@dataclass(frozen=True)
class PeriodWindow:
    """One period of a family: the concrete board's id and the instants it covers."""

    leaderboard_id: str
    starts_at: datetime
    ends_at: datetime


def _local_midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone)


def period_window(family: FamilyItem, at: datetime) -> PeriodWindow | None:
    """The period of ``family`` that contains ``at``; None before the first season."""
    fid = family.family_id
    if family.period is Period.DAILY:
        day = at.astimezone(family.zone).date()
        return PeriodWindow(
            f"{fid}.daily.{day.isoformat()}",
            _local_midnight(day, family.zone),
            _local_midnight(day + timedelta(days=1), family.zone),
        )
    if family.period is Period.WEEKLY:
        day = at.astimezone(family.zone).date()
        year, week, weekday = day.isocalendar()
        monday = day - timedelta(days=weekday - 1)
        return PeriodWindow(
            f"{fid}.weekly.{year}-W{week:02d}",
            _local_midnight(monday, family.zone),
            _local_midnight(monday + timedelta(days=7), family.zone),
        )
    if family.season_start is None or family.season_days is None or at < family.season_start:
        return None
    length = timedelta(days=family.season_days)
    index = (at - family.season_start) // length
    start = family.season_start + index * length
    return PeriodWindow(f"{fid}.season.{index + 1}", start, start + length)


def concrete_board(
    family: FamilyItem, window: PeriodWindow, created_at: datetime
) -> LeaderboardItem:
    """The Leaderboard item of one period of ``family`` (as written by its first submission),
    with the family's rules and bounds."""
    expires = window.ends_at + timedelta(days=family.retention_days)
    return LeaderboardItem(
        leaderboard_id=window.leaderboard_id,
        name=f"{family.name} ({window.leaderboard_id.removeprefix(family.family_id + '.')})",
        period=family.period,
        sort_order=family.sort_order,
        operator=family.operator,
        score_width=family.score_width,
        min_score=family.min_score,
        max_score=family.max_score,
        starts_at=window.starts_at,
        ends_at=window.ends_at,
        family_id=family.family_id,
        partitions=family.partitions,
        ttl=int(expires.timestamp()),
        created_at=created_at,
        archive_days=family.archive_days,
        reward_tiers=family.reward_tiers,
        close_due=close_due(window.ends_at),
    )


def nearby_board_ids(family: FamilyItem, at: datetime) -> list[str]:
    """The ids of the family's boards of the periods before, at and after ``at`` (of its first
    two seasons before its first season starts)."""
    current = period_window(family, at)
    if current is None and family.season_start is not None:
        current = period_window(family, family.season_start)
    if current is None:
        return []
    windows = [
        period_window(family, current.starts_at - timedelta(milliseconds=1)),
        current,
        period_window(family, current.ends_at),
    ]
    return list(dict.fromkeys(w.leaderboard_id for w in windows if w is not None))


async def create_family(db: Db, family: FamilyItem) -> FamilyItem:
    """Write a new family, unless boards already hold the ids of its previous, current or
    next period (boards written before those ids were reserved): one BatchGetItem checks."""
    nearby = nearby_board_ids(family, family.created_at)
    found = await batch_get(
        db, [LEADERBOARD.key(leaderboard_id=b) for b in nearby], consistent=True
    )
    taken = [b for b in nearby if LEADERBOARD.key(leaderboard_id=b) in found]
    if taken:
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_EXISTS,
            f"boards with this family's ids already exist ({', '.join(taken)}); "
            "choose another family id",
            Subject.FAMILY,
        )
    if not await put_new(db, FAMILY.item(family), f"family {family.family_id!r}"):
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_EXISTS,
            f"family {family.family_id!r} already exists",
            Subject.FAMILY,
        )
    return family


async def get_families(db: Db, family_ids: Sequence[str]) -> list[FamilyItem | None]:
    """Family definitions by id, in order, None where missing. A definition never changes but
    for its ``partitions``, so it is read once per process (BatchGetItem) and then served
    from memory: its partitions as they stood when read (:func:`read_family` reads them
    again)."""
    keys = [FAMILY.key(family_id=f) for f in family_ids]
    return await get_items(db, FamilyItem, keys, immutable=True)


async def read_family(db: Db, family_id: str) -> FamilyItem | None:
    """The family as it stands (GetItem with ConsistentRead); the process's copy of its
    definition is replaced by what was read."""
    key = FAMILY.key(family_id=family_id)
    found = await batch_get(db, [key], consistent=True)
    if key not in found:
        return None
    db.immutable.put(key, found[key])
    return parse(FamilyItem, found[key])


async def create_family_board(db: Db, board: LeaderboardItem) -> LeaderboardItem | None:
    """Write a periodic family's board of one period (:func:`concrete_board`), as the first
    play of the period that finds it missing does, before its own transaction: one
    conditional PutItem, so that the first plays of a period never share a transaction's
    item. It takes the family's partitions as they stand, read consistently before (the
    process's copy of the definition may be older). The board as written; None when another
    play wrote it first (read it again)."""
    family = await read_family(db, board.family_id) if board.family_id is not None else None
    if family is not None and family.partitions != board.partitions:
        board = board.model_copy(update={"partitions": family.partitions})
    if await put_new(db, LEADERBOARD.item(board), f"leaderboard {board.leaderboard_id!r}"):
        return board
    return None


async def set_family_partitions(db: Db, family_id: str, partitions: int) -> FamilyItem:
    """Change the partitions of the family's boards created from now on (one conditional
    UpdateItem); the boards it has keep theirs. LEADERBOARD_NOT_FOUND (subject FAMILY) for
    an unknown family."""
    key = FAMILY.key_attributes(family_id=family_id)
    try:
        response = await db.client.update_item(
            TableName=db.table,
            Key=serialize(key),
            UpdateExpression="SET #partitions = :partitions",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeNames={"#partitions": "partitions"},
            ExpressionAttributeValues=serialize({":partitions": partitions}),
            ReturnValues="ALL_NEW",
        )
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_NOT_FOUND, f"no leaderboard family {family_id!r}", Subject.FAMILY
        ) from None
    raw = response["Attributes"]
    db.immutable.put((key["pk"], key["sk"]), raw)
    return parse(FamilyItem, raw)
