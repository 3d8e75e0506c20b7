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

import math
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
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
from dynamo.rewards import MAX_QUANTITY, MAX_REWARD_ID, MAX_TIERS, RewardTier, TierKind

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_ARCHIVE_DAYS",
    "MAX_IDS",
    "MAX_NAME",
    "MAX_PAGE_SIZE",
    "PAGE",
    "PERCENT_DECIMALS",
    "FieldError",
    "TierArguments",
    "check_archive_days",
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
    "clean_reward_tiers",
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
MAX_ARCHIVE_DAYS = 3650
"""Most days a board's final standings may be kept after its end (``archiveDays``; omitted,
they are kept for ever)."""
PERCENT_DECIMALS = 4
"""Most decimals of a TOP_PERCENT tier's ``topPercent`` (0.0001 is the finest share)."""
_REWARD_ID = re.compile(rf"[A-Za-z0-9_.:-]{{1,{MAX_REWARD_ID}}}")


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
    check_archive_days(board.archive_days)


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
    check_archive_days(family.archive_days)
    check_board_shape(family.score_width, min_score=family.min_score, max_score=family.max_score)
    check_partitions(family.partitions)


def check_archive_days(archive_days: int | None) -> None:
    """How long a board's final standings are kept after its end: None (for ever), or 0 to
    MAX_ARCHIVE_DAYS days."""
    if archive_days is not None and not 0 <= archive_days <= MAX_ARCHIVE_DAYS:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"archiveDays must be between 0 and {MAX_ARCHIVE_DAYS}",
            "archiveDays",
        )


def check_partitions(partitions: int) -> None:
    """A board's number of partitions: a power of two from 1 to MAX_PARTITIONS."""
    if not 1 <= partitions <= MAX_PARTITIONS or partitions & (partitions - 1):
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"partitions must be a power of two from 1 to {MAX_PARTITIONS} "
            f"(1, 2, 4, ..., {MAX_PARTITIONS})",
            "partitions",
        )


@dataclass(frozen=True)
class TierArguments:
    """One reward tier as a client sent it (RewardTierInput), before it is checked."""

    kind: TierKind
    reward_id: str
    quantity: int | None = 1
    from_rank: int | None = None
    to_rank: int | None = None
    top_percent: float | None = None
    score: int | None = None


_TIERS = "rewardTiers"


def _tier_error(index: int, message: str) -> FieldError:
    return FieldError(ErrorCode.INVALID_ARGUMENT, f"rewardTiers[{index}]: {message}", _TIERS)


def clean_reward_tiers(
    tiers: Sequence[TierArguments] | None, score_width: int
) -> list[RewardTier] | None:
    """A board's or a family's reward tiers, in the order given; None for none (omitted or
    empty). INVALID_ARGUMENT at ``rewardTiers`` for more than MAX_TIERS, or for a tier that
    is not well formed: its reward id and quantity, and the one threshold its kind takes
    (RANKS: ``fromRank`` from 1 and ``toRank`` not below it, or null; TOP_PERCENT: a
    ``topPercent`` above 0 and at most 100, of at most PERCENT_DECIMALS decimals; SCORE: a
    ``score`` within the scores of ``score_width``), the others null."""
    if not tiers:
        return None
    if len(tiers) > MAX_TIERS:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT, f"rewardTiers takes at most {MAX_TIERS} tiers", _TIERS
        )
    return [_clean_tier(i, tier, score_width) for i, tier in enumerate(tiers)]


def _clean_tier(index: int, tier: TierArguments, score_width: int) -> RewardTier:
    if not _REWARD_ID.fullmatch(tier.reward_id):
        raise _tier_error(
            index,
            f"rewardId must be 1-{MAX_REWARD_ID} characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'",
        )
    quantity = 1 if tier.quantity is None else tier.quantity
    if not 1 <= quantity <= MAX_QUANTITY:
        raise _tier_error(index, f"quantity must be between 1 and {MAX_QUANTITY}")
    given = {
        "fromRank": tier.from_rank is not None,
        "toRank": tier.to_rank is not None,
        "topPercent": tier.top_percent is not None,
        "score": tier.score is not None,
    }
    takes = {
        TierKind.RANKS: {"fromRank", "toRank"},
        TierKind.TOP_PERCENT: {"topPercent"},
        TierKind.SCORE: {"score"},
    }[tier.kind]
    stray = [name for name, present in given.items() if present and name not in takes]
    if stray:
        raise _tier_error(index, f"a {tier.kind.value} tier takes no {' and no '.join(stray)}")
    if tier.kind is TierKind.RANKS:
        if tier.from_rank is None or tier.from_rank < 1:
            raise _tier_error(index, "a RANKS tier needs a fromRank of 1 or more")
        if tier.to_rank is not None and tier.to_rank < tier.from_rank:
            raise _tier_error(
                index, f"toRank ({tier.to_rank}) must not be below fromRank ({tier.from_rank})"
            )
        return RewardTier(
            kind=tier.kind,
            reward_id=tier.reward_id,
            quantity=quantity,
            from_rank=tier.from_rank,
            to_rank=tier.to_rank,
        )
    if tier.kind is TierKind.TOP_PERCENT:
        return RewardTier(
            kind=tier.kind,
            reward_id=tier.reward_id,
            quantity=quantity,
            top_percent=_percent(index, tier.top_percent),
        )
    widest = largest_score(score_width)
    if tier.score is None or not 0 <= tier.score <= widest:
        raise _tier_error(
            index,
            f"a SCORE tier needs a score between 0 and {widest}, the largest score of "
            f"scoreWidth {score_width}",
        )
    return RewardTier(kind=tier.kind, reward_id=tier.reward_id, quantity=quantity, score=tier.score)


def _percent(index: int, value: float | None) -> Decimal:
    """A TOP_PERCENT tier's share as the exact decimal the client wrote (its float's shortest
    text): above 0, at most 100, of at most PERCENT_DECIMALS decimals."""
    refused = _tier_error(
        index,
        f"a TOP_PERCENT tier needs a topPercent above 0 and at most 100, of at most "
        f"{PERCENT_DECIMALS} decimals",
    )
    if value is None or not math.isfinite(value):
        raise refused
    try:
        share = Decimal(str(value))
    except InvalidOperation:
        raise refused from None
    exponent = share.as_tuple().exponent
    if not 0 < share <= 100 or not isinstance(exponent, int):
        raise refused
    if share == share.to_integral_value():
        return share.quantize(Decimal(1))
    share = share.normalize()
    exponent = share.as_tuple().exponent
    if not isinstance(exponent, int) or exponent < -PERCENT_DECIMALS:
        raise refused
    return share
