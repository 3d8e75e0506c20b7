"""Validation of the identifiers that end up inside keys, and session id generation."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ulid import ULID

from dynamo.emails import normalize_email
from dynamo.errors import ErrorCode, LeaderboardError

__all__ = [
    "ID_PATTERN",
    "new_session_id",
    "validate_email",
    "validate_id",
    "validate_instant",
    "validate_name",
    "validate_session_id",
    "validate_submission_id",
]

ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_SESSION_ID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}", re.IGNORECASE)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_MAX_NAME = 100


def validate_id(value: str, field: str) -> str:
    """Return ``value`` when it is a valid player, leaderboard or game id; raise INVALID_ID."""
    if not ID_PATTERN.fullmatch(value):
        raise LeaderboardError(
            ErrorCode.INVALID_ID,
            f"{field} must be 1-64 characters of A-Z, a-z, 0-9, '_', '.' or '-'",
            field,
        )
    return value


def validate_session_id(value: str, field: str = "sessionId") -> str:
    """Return ``value`` when it is a ULID in canonical upper-case form; raise INVALID_ID."""
    if not _SESSION_ID.fullmatch(value):
        raise LeaderboardError(ErrorCode.INVALID_ID, f"{field} must be a 26-character ULID", field)
    return value


def validate_email(value: str, field: str = "email") -> str:
    """Return the address in its normalised form (see dynamo/emails.py); raise INVALID_EMAIL
    for anything that is not one."""
    return normalize_email(value, field)


def validate_name(value: str, field: str = "name") -> str:
    """Return the trimmed display name; raise INVALID_NAME when empty, too long or unprintable."""
    name = value.strip()
    if not name or len(name) > _MAX_NAME or not name.isprintable():
        raise LeaderboardError(
            ErrorCode.INVALID_NAME,
            f"{field} must be 1-{_MAX_NAME} printable characters",
            field,
        )
    return name


def validate_submission_id(value: str) -> str:
    """A ULID (returned upper-case) or a UUID (returned lower-case); INVALID_ID otherwise."""
    if _ULID.fullmatch(value):
        return value.upper()
    if _UUID.fullmatch(value):
        return value.lower()
    raise LeaderboardError(
        ErrorCode.INVALID_ID, "submissionId must be a ULID or a UUID", "submissionId"
    )


_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(3000, 1, 1, tzinfo=UTC)


def validate_instant(value: datetime, field: str) -> datetime:
    """A client's instant in UTC (no offset means UTC), from 1970 to 2999; INVALID_ARGUMENT
    otherwise (an offset at either end of the calendar cannot even be converted)."""
    try:
        instant = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        instant = None
    if instant is None or not _EARLIEST <= instant < _LATEST:
        raise LeaderboardError(
            ErrorCode.INVALID_ARGUMENT, f"{field} must be between 1970 and 2999", field
        )
    return instant


def new_session_id() -> str:
    """A new ULID: sorts by creation time, so SESSION# keys read descending are newest first."""
    return str(ULID())
