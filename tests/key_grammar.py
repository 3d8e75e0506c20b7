"""The key grammar of the table (docs/explanation/table-design.md, "The table"): every item's keys
are exactly one of the documented templates, with well-formed ids, scores and e-mail addresses
(tests only)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ENTITIES", "key_violation", "key_violations"]

_ID = r"(?P<{name}>[A-Za-z0-9_.-]{{1,64}})"
_ULID = r"[0-9A-HJKMNP-TV-Z]{26}"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Anything but whitespace, "@" and control characters; checked further by ``_email_ok``.
_EMAIL = r"(?P<email>[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]+\.[^@\s\x00-\x1f\x7f]+)"
_MAX_EMAIL = 254


def _id(name: str) -> str:
    return _ID.format(name=name)


def _same(name: str) -> str:
    return f"(?P={name})"


# Each entity: the four key attributes, as regular expressions over the values joined by
# "\n" (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk; an absent attribute is the empty string), so
# that an id used in two keys must be the same id in both.
ENTITIES: dict[str, str] = {
    "player": "\n".join(
        [
            f"PLAYER#{_id('player')}",
            "#METADATA",
            f"PLAYER_EMAIL#{_EMAIL}",
            f"PLAYER#{_same('player')}",
            "",
            "",
        ]
    ),
    "leaderboard": "\n".join([f"LEADERBOARD#{_id('board')}", "#METADATA", "", "", "", ""]),
    "leaderboard awaiting its close": "\n".join(
        [
            f"LEADERBOARD#{_id('board')}",
            "#METADATA",
            "CLOSE_DUE",
            f"[0-9]{{13}}#{_same('board')}",
            "",
            "",
        ]
    ),
    "closed leaderboard": "\n".join(
        [
            f"LEADERBOARD#{_id('board')}",
            "#METADATA",
            "",
            "",
            "CLOSED_BOARDS",
            f"[0-9]{{13}}#{_same('board')}",
        ]
    ),
    "entry count shard": "\n".join([f"LEADERBOARD#{_id('board')}", "#COUNT#[0-9]{2}", *[""] * 4]),
    "score": "\n".join(
        [
            f"LEADERBOARD#{_id('board')}",
            f"SCORE#[0-9]{{1,15}}#[0-9]{{13}}#{_id('player')}",
            f"PLAYER#{_same('player')}",
            f"SCORE#{_same('board')}",
            "",
            "",
        ]
    ),
    "score on a write-sharded board": "\n".join(
        [
            f"LEADERBOARD#{_id('board')}#[0-9]{{2}}",
            f"SCORE#[0-9]{{1,15}}#[0-9]{{13}}#{_id('player')}",
            f"PLAYER#{_same('player')}",
            f"SCORE#{_same('board')}",
            "",
            "",
        ]
    ),
    "session": "\n".join(
        [
            f"PLAYER#{_id('player')}",
            f"SESSION#(?P<session>{_ULID})",
            "",
            "",
            f"GAME#{_id('game')}",
            f"SESSION#{_same('session')}",
        ]
    ),
    "entry guard": "\n".join([f"PLAYER#{_id('player')}", f"ENTRY#{_id('board')}", *[""] * 4]),
    "e-mail claim": "\n".join([f"PLAYER_EMAIL#{_EMAIL}", "#CLAIM", *[""] * 4]),
    "family": "\n".join([f"FAMILY#{_id('family')}", "#METADATA", *[""] * 4]),
    "final result": "\n".join(
        [
            f"PLAYER#{_id('player')}",
            f"RESULT#{_id('board')}",
            f"PLAYER#{_same('player')}",
            f"RESULT#[0-9]{{13}}#{_same('board')}",
            f"RESULTS#{_same('board')}",
            "POSITION#[0-9]{10}",
        ]
    ),
    "reward claim": "\n".join([f"PLAYER#{_id('player')}", f"CLAIM#{_id('board')}", *[""] * 4]),
    "webhook delivery, pending": "\n".join(
        [
            f"LEADERBOARD#{_id('board')}",
            "DELIVERY",
            "WEBHOOK_OUTBOX",
            f"[0-9]{{13}}#{_same('board')}",
            "",
            "",
        ]
    ),
    "webhook delivery, done": "\n".join([f"LEADERBOARD#{_id('board')}", "DELIVERY", *[""] * 4]),
    "submission": "\n".join(
        [f"PLAYER#{_id('player')}", f"SUBMISSION#(?:{_ULID}|{_UUID})", *[""] * 4]
    ),
}
_COMPILED = {name: re.compile(pattern) for name, pattern in ENTITIES.items()}
_KEYS = ("pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk")


def _email_ok(email: str) -> bool:
    return (
        len(email) <= _MAX_EMAIL
        and email == email.lower()
        and email == email.strip()
        and not any(c.isspace() for c in email)
    )


def key_violation(item: Mapping[str, Any]) -> str | None:
    """Why ``item``'s keys match no documented template, or None when they match one."""
    values = [item.get(k, "") for k in _KEYS]
    if not all(isinstance(v, str) for v in values):
        return f"a key attribute is not a string: {values!r}"
    if any(v == "" and k in item for k, v in zip(_KEYS, values, strict=True)):
        return f"an empty key attribute: {values!r}"
    for value in values:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"a key is not valid UTF-8 (lone surrogate): {value!r}"
    joined = "\n".join(values)
    for name, pattern in _COMPILED.items():
        match = pattern.fullmatch(joined)
        if match is None:
            continue
        email = match.groupdict().get("email")
        if email is not None and not _email_ok(email):
            return f"{name} item with a malformed e-mail key: {email!r}"
        return None
    return f"no template matches the keys {dict(zip(_KEYS, values, strict=True))!r}"


def key_violations(items: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every item of ``items`` (a scan of the table) whose keys break the grammar."""
    return [v for item in items if (v := key_violation(item)) is not None]
