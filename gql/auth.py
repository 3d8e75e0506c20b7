"""API keys: who may write, and read private data."""

from __future__ import annotations

import hmac
from collections.abc import Iterable

__all__ = ["ApiKeys"]

_BEARER = "bearer "


class ApiKeys:
    """The server keys a client may present as ``Authorization: Bearer <key>``. Several keys
    are accepted at once so that one can be rotated out while the next is rolled in."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._keys = [k.encode() for k in keys if k]

    def __bool__(self) -> bool:
        return bool(self._keys)

    def __repr__(self) -> str:
        return f"ApiKeys({len(self._keys)} keys)"

    def accepts(self, authorization: str | None) -> bool:
        """Whether the header carries one of the keys. Every key is compared, in constant time,
        whatever the outcome, so the timing tells nothing about the keys."""
        if not authorization or authorization[: len(_BEARER)].lower() != _BEARER:
            return False
        try:
            presented = authorization[len(_BEARER) :].strip().encode()
        except UnicodeEncodeError:
            return False  # not a key this service could have issued
        matched = False
        for key in self._keys:
            matched |= hmac.compare_digest(presented, key)
        return matched
