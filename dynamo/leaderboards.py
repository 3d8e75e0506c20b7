"""Leaderboard metadata items: AP9 (by id) and board creation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import Item
from dynamo.keys import Entity
from dynamo.put_new import put_new
from dynamo.reads import get_items

__all__ = [
    "FAMILY_BOARD_ID",
    "LEADERBOARD",
    "MAX_SCORE_WIDTH",
    "LeaderboardItem",
    "Operator",
    "Period",
    "SortOrder",
    "create_leaderboard",
    "get_leaderboard",
    "get_leaderboards",
    "is_family_board_id",
    "largest_score",
    "reserved_id_message",
]

LEADERBOARD = Entity.declare("Leaderboard", pk="LEADERBOARD#{leaderboard_id}", sk="#METADATA")

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
    family_id: str | None = None
    """The family that owns this board, for the concrete boards of a periodic family."""
    ttl: int | None = None
    """Epoch seconds after which DynamoDB may delete the board (periodic boards only)."""
    created_at: datetime

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
        """Whether a score attained at ``at`` may enter this board: startsAt <= at < endsAt."""
        if self.starts_at is not None and at < self.starts_at:
            return False
        return self.ends_at is None or at < self.ends_at


FAMILY_BOARD_ID = re.compile(
    r"(?P<family>.+)\.(?:daily\.\d{4}-\d{2}-\d{2}|weekly\.\d{4}-W\d{2}|season\.\d+)"
)
"""The form of a periodic family's board ids (``<familyId>.daily.2026-11-21``,
``<familyId>.weekly.2026-W47``, ``<familyId>.season.3``): reserved for the families."""


def is_family_board_id(leaderboard_id: str) -> bool:
    return FAMILY_BOARD_ID.fullmatch(leaderboard_id) is not None


async def get_leaderboard(db: Db, leaderboard_id: str) -> LeaderboardItem | None:
    """AP9 for one id."""
    return (await get_leaderboards(db, [leaderboard_id]))[0]


async def get_leaderboards(
    db: Db, ids: Sequence[str], *, consistent: bool = False
) -> list[LeaderboardItem | None]:
    """AP9 batched: one result per id, in order, None where missing; ``consistent``: with
    ConsistentRead."""
    keys = [LEADERBOARD.key(leaderboard_id=i) for i in ids]
    return await get_items(db, LeaderboardItem, keys, consistent=consistent)


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
