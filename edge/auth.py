"""API keys: who may write, read private data, and moderate."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from resolvers.context import Caller, Role

__all__ = ["ApiKeys", "fingerprint"]

_BEARER = "bearer "


def fingerprint(key: str | bytes) -> str:
    """A short, stable name for a key that does not reveal it: the first 12 hex digits of its
    SHA-256. Logs and the moderation log name the actor by it."""
    data = key.encode() if isinstance(key, str) else key
    return hashlib.sha256(data).hexdigest()[:12]


class ApiKeys:
    """The keys a client may present as ``Authorization: Bearer <key>``: game-server keys
    (``LEADERBOARD_API_KEYS``: players, boards, plays, private reads) and admin keys
    (``LEADERBOARD_ADMIN_KEYS``: all of that, and moderation). Several keys of each kind are
    accepted at once so that one can be rotated out while the next is rolled in."""

    def __init__(self, keys: Iterable[str], admin_keys: Iterable[str] = ()) -> None:
        self._keys = [(k.encode(), Role.GAME_SERVER) for k in keys if k]
        self._keys += [(k.encode(), Role.ADMIN) for k in admin_keys if k]
        self._names = {key: fingerprint(key) for key, _ in self._keys}

    def __bool__(self) -> bool:
        return bool(self._keys)

    def __repr__(self) -> str:
        admins = sum(1 for _, role in self._keys if role is Role.ADMIN)
        return f"ApiKeys({len(self._keys) - admins} keys, {admins} admin keys)"

    def caller(self, authorization: str | None) -> Caller:
        """Who the header says the caller is. Every key is compared, in constant time, whatever
        the outcome, so the timing tells nothing about the keys; a key that is both kinds
        counts as an admin key."""
        if not authorization or authorization[: len(_BEARER)].lower() != _BEARER:
            return Caller()
        try:
            presented = authorization[len(_BEARER) :].strip().encode()
        except UnicodeEncodeError:
            return Caller()  # not a key this service could have issued
        found: tuple[bytes, Role] | None = None
        for key, role in self._keys:
            if hmac.compare_digest(presented, key) and (found is None or role > found[1]):
                found = (key, role)
        if found is None:
            return Caller()
        return Caller(role=found[1], actor=self._names[found[0]])
