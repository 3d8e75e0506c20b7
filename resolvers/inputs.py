"""Client input checked where its GraphQL names are known.

Every argument and input field a client sends is cleaned here before anything below sees it:
ids that could not sit in a key, names, addresses, instants, sizes and a new board's or
family's definition. A refusal is a :class:`FieldError` naming the field at fault as the
schema names it. What passes is a valid domain value; dynamo/ then raises only errors that
depend on what is stored (an unknown player, a closed board, a taken id), in domain terms and
with the :class:`~dynamo.errors.Subject` they are about, and :func:`naming` says which field of
the operation carries that subject.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dynamo.emails import normalize_email
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.families import MAX_FAMILY_ID, MAX_RETENTION_DAYS, MAX_SEASON_DAYS, FamilyItem
from dynamo.ids import ID_PATTERN
from dynamo.items import Item
from dynamo.leaderboards import (
    MAX_PARTITIONS,
    MAX_SCORE_WIDTH,
    LeaderboardItem,
    Period,
    is_family_board_id,
    largest_score,
    reserved_id_message,
)
from dynamo.metadata import MAX_METADATA_BYTES, MAX_METADATA_DEPTH, encode_metadata
from dynamo.reads import Page

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_IDS",
    "MAX_NAME",
    "MAX_PAGE_SIZE",
    "PAGE",
    "FieldError",
    "check_board_shape",
    "check_new_board",
    "check_new_family",
    "check_partitions",
    "check_score_bounds",
    "clean_email",
    "clean_id",
    "clean_id_list",
    "clean_instant",
    "clean_metadata",
    "clean_name",
    "clean_session_id",
    "clean_submission_id",
    "naming",
    "page_of",
    "page_size",
]


class FieldError(LeaderboardError):
    """A client's input refused at one GraphQL argument or input field."""

    def __init__(self, code: ErrorCode, message: str, field: str) -> None:
        super().__init__(code, message)
        self.field = field
        """The argument or input field at fault, as the schema names it."""


@contextmanager
def naming(fields: Mapping[Subject, str]) -> Iterator[None]:
    """Raise the domain errors of the block as :class:`FieldError` at the field that carries
    their subject in this operation; errors about anything else pass unchanged."""
    try:
        yield
    except FieldError:
        raise
    except LeaderboardError as error:
        field = fields.get(error.subject) if error.subject is not None else None
        if field is None:
            raise
        raise FieldError(error.code, error.message, field) from error


T = TypeVar("T", bound=Item)

PAGE = {Subject.CURSOR: "after"}
"""How every paginated field names its cursor."""

_SESSION_ID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}", re.IGNORECASE)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
MAX_NAME = 100
"""Longest display name (a player's, a board's, a family's), in characters, all printable."""
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(3000, 1, 1, tzinfo=UTC)
MAX_IDS = 100
"""Most ids in one list argument (``players(ids:)``, ``ranksOf(playerIds:)``, a player's
``ranks(leaderboardIds:)``)."""
DEFAULT_PAGE_SIZE = 20
"""Items of a page when ``first`` is not given."""
MAX_PAGE_SIZE = 100
"""Most items of one page of a list (``first``); 0 is allowed."""


async def page_of(
    read: Callable[[int, str | None], Awaitable[Page[T]]], first: int | None, after: str | None
) -> Page[T]:
    """A page read with the client's ``first`` checked and its ``after`` cursor refused at
    ``after``."""
    size = page_size(first)
    with naming(PAGE):
        return await read(size, after)


def page_size(first: int | None) -> int:
    """``first`` checked against the cap; 20 when not given."""
    if first is None:
        return DEFAULT_PAGE_SIZE
    if not 0 <= first <= MAX_PAGE_SIZE:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT, f"first must be between 0 and {MAX_PAGE_SIZE}", "first"
        )
    return first


def clean_id(value: str, field: str) -> str:
    """``value`` when it is a valid player, leaderboard, family or game id; INVALID_ID."""
    if not ID_PATTERN.fullmatch(value):
        raise FieldError(
            ErrorCode.INVALID_ID,
            f"{field} must be 1-64 characters of A-Z, a-z, 0-9, '_', '.' or '-'",
            field,
        )
    return value


def clean_id_list(ids: list[str], field: str) -> list[str]:
    """A list of ids asked for at once: at most 100, each valid; duplicates dropped."""
    if len(ids) > MAX_IDS:
        raise FieldError(ErrorCode.INVALID_ARGUMENT, f"{field} takes at most {MAX_IDS} ids", field)
    return list(dict.fromkeys(clean_id(i, field) for i in ids))


def clean_session_id(value: str, field: str = "sessionId") -> str:
    """``value`` when it is a ULID in canonical upper-case form; INVALID_ID."""
    if not _SESSION_ID.fullmatch(value):
        raise FieldError(ErrorCode.INVALID_ID, f"{field} must be a 26-character ULID", field)
    return value


def clean_submission_id(value: str, field: str = "submissionId") -> str:
    """A ULID (returned upper-case) or a UUID (returned lower-case); INVALID_ID otherwise."""
    if _ULID.fullmatch(value):
        return value.upper()
    if _UUID.fullmatch(value):
        return value.lower()
    raise FieldError(ErrorCode.INVALID_ID, f"{field} must be a ULID or a UUID", field)


def clean_email(value: str, field: str = "email") -> str:
    """The address in its stored form (see dynamo/emails.py); INVALID_EMAIL."""
    with naming({Subject.EMAIL: field}):
        return normalize_email(value)


def clean_name(value: str, field: str = "name") -> str:
    """The trimmed display name; INVALID_NAME when empty, too long or unprintable."""
    name = value.strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise FieldError(
            ErrorCode.INVALID_NAME, f"{field} must be 1-{MAX_NAME} printable characters", field
        )
    return name


def clean_instant(value: datetime, field: str) -> datetime:
    """A client's instant in UTC (no offset means UTC), from 1970 to 2999; INVALID_ARGUMENT
    otherwise (an offset at either end of the calendar cannot even be converted)."""
    try:
        instant = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        instant = None
    if instant is None or not _EARLIEST <= instant < _LATEST:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT, f"{field} must be between 1970 and 2999", field
        )
    return instant


_METADATA = (
    f"metadata must be a JSON object of at most {MAX_METADATA_BYTES} bytes (compact UTF-8 "
    f"JSON), nested at most {MAX_METADATA_DEPTH} deep, with finite numbers and valid text"
)


def clean_metadata(value: object, field: str = "metadata") -> dict[str, Any]:
    """A play's metadata: a JSON object, nested at most 8 deep, of string keys and JSON values
    with finite numbers and text that is valid Unicode, at most 1024 bytes as compact UTF-8
    JSON; INVALID_METADATA otherwise. The shape is walked first, each value once and no more
    values than the size allows, so that a huge or deep document costs little to refuse."""
    if not isinstance(value, dict) or not _metadata_shape_ok(value):
        raise FieldError(ErrorCode.INVALID_METADATA, _METADATA, field)
    try:
        size = len(encode_metadata(value).encode("utf-8"))
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        raise FieldError(ErrorCode.INVALID_METADATA, _METADATA, field) from None
    if size > MAX_METADATA_BYTES:
        raise FieldError(
            ErrorCode.INVALID_METADATA,
            f"{_METADATA}; this one is {size} bytes",
            field,
        )
    return value


def _metadata_shape_ok(document: dict[Any, Any]) -> bool:
    """Whether ``document`` holds only JSON values, nested at most MAX_METADATA_DEPTH deep
    and few enough to fit the size (every value takes at least one byte)."""
    stack: list[tuple[object, int]] = [(document, 1)]
    count = 1
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            count += len(value)
            if depth > MAX_METADATA_DEPTH or count > MAX_METADATA_BYTES:
                return False
            if isinstance(value, dict):
                if not all(isinstance(k, str) for k in value):
                    return False
                value = list(value.values())
            stack.extend((v, depth + 1) for v in value)
        elif not (value is None or isinstance(value, str | int | float)):
            return False
    return True


def check_new_board(board: LeaderboardItem) -> None:
    """A new board's definition: an id not of the form reserved for the families' boards,
    and a shape that can hold scores correctly."""
    if is_family_board_id(board.leaderboard_id):
        raise FieldError(ErrorCode.INVALID_ID, reserved_id_message(board.leaderboard_id), "id")
    check_board_shape(
        board.score_width,
        board.starts_at,
        board.ends_at,
        min_score=board.min_score,
        max_score=board.max_score,
    )
    check_partitions(board.partitions)


def check_board_shape(
    score_width: int,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    *,
    min_score: int | None = None,
    max_score: int | None = None,
) -> None:
    """A board definition that can hold scores correctly: its width, its bounds and its
    window."""
    if not 1 <= score_width <= MAX_SCORE_WIDTH:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"scoreWidth must be between 1 and {MAX_SCORE_WIDTH}",
            "scoreWidth",
        )
    check_score_bounds(score_width, min_score, max_score)
    if starts_at and ends_at and ends_at <= starts_at:
        raise FieldError(ErrorCode.INVALID_ARGUMENT, "endsAt must be after startsAt", "endsAt")


def check_score_bounds(score_width: int, min_score: int | None, max_score: int | None) -> None:
    """``minScore`` and ``maxScore``, where given, each within the scores of the width, and
    ``minScore`` not above ``maxScore``."""
    widest = largest_score(score_width)
    for value, field in ((min_score, "minScore"), (max_score, "maxScore")):
        if value is not None and not 0 <= value <= widest:
            raise FieldError(
                ErrorCode.INVALID_ARGUMENT,
                f"{field} must be between 0 and {widest}, the largest score of "
                f"scoreWidth {score_width}",
                field,
            )
    if min_score is not None and max_score is not None and min_score > max_score:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"minScore ({min_score}) must not be above maxScore ({max_score})",
            "minScore",
        )


def check_new_family(family: FamilyItem) -> None:
    """A family definition that can produce valid boards: its id, period, time zone and
    seasons, then its width and bounds as a board's."""
    period, timezone = family.period, family.timezone
    season_days = family.season_days
    if len(family.family_id) > MAX_FAMILY_ID:
        raise FieldError(
            ErrorCode.INVALID_ID, f"a family id has at most {MAX_FAMILY_ID} characters", "id"
        )
    if period is Period.GLOBAL:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT, "a family is DAILY, WEEKLY or SEASON", "period"
        )
    try:
        if len(timezone) > 64:
            raise ValueError(timezone)
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT, f"unknown time zone {timezone!r}", "timezone"
        ) from None
    if period is Period.SEASON and (
        family.season_start is None or not season_days or season_days < 1
    ):
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            "a SEASON family needs seasonStart and seasonDays (at least 1)",
            "seasonDays",
        )
    if season_days is not None and not 1 <= season_days <= MAX_SEASON_DAYS:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"seasonDays must be between 1 and {MAX_SEASON_DAYS}",
            "seasonDays",
        )
    if not 0 <= family.retention_days <= MAX_RETENTION_DAYS:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"retentionDays must be between 0 and {MAX_RETENTION_DAYS}",
            "retentionDays",
        )
    check_board_shape(family.score_width, min_score=family.min_score, max_score=family.max_score)
    check_partitions(family.partitions)


def check_partitions(partitions: int) -> None:
    """A board's number of partitions: a power of two from 1 to MAX_PARTITIONS."""
    if not 1 <= partitions <= MAX_PARTITIONS or partitions & (partitions - 1):
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"partitions must be a power of two from 1 to {MAX_PARTITIONS} "
            f"(1, 2, 4, ..., {MAX_PARTITIONS})",
            "partitions",
        )
