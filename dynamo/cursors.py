"""Opaque, signed pagination cursors wrapping a DynamoDB exclusive start key."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass

from dynamo.errors import ErrorCode, LeaderboardError, Subject

__all__ = ["CursorCodec", "CursorShape"]

_MAX_CURSOR = 1024
_TAG_BYTES = 16


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class CursorShape:
    """The key a cursor must hold for one query: partition values exactly, sort keys by prefix."""

    exact: Mapping[str, str]
    prefixes: Mapping[str, str]

    @property
    def attributes(self) -> frozenset[str]:
        return frozenset(self.exact) | frozenset(self.prefixes)


class CursorCodec:
    """Encodes a key as ``<payload>.<tag>``; the tag is an HMAC-SHA256 under a server secret.

    A cursor that was not produced by a server holding the same secret, or that does not have
    the key shape of the query it is handed to, is rejected with INVALID_CURSOR.
    """

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the cursor secret must be at least 16 bytes")
        self._secret = secret

    def _tag(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:_TAG_BYTES]

    def encode(self, start_key: Mapping[str, str]) -> str:
        payload = json.dumps(dict(start_key), sort_keys=True, separators=(",", ":")).encode()
        return f"{_b64encode(payload)}.{_b64encode(self._tag(payload))}"

    def decode(self, cursor: str, shape: CursorShape) -> dict[str, str]:
        """The key inside ``cursor``, which must have exactly the attributes of ``shape``."""
        invalid = LeaderboardError(
            ErrorCode.INVALID_CURSOR,
            "the cursor is malformed or not from this list",
            Subject.CURSOR,
        )
        if len(cursor) > _MAX_CURSOR or cursor.count(".") != 1:
            raise invalid
        body, tag = cursor.split(".")
        try:
            payload = _b64decode(body)
            given = _b64decode(tag)
        except (binascii.Error, ValueError):
            raise invalid from None
        if not hmac.compare_digest(given, self._tag(payload)):
            raise invalid
        try:
            start_key = json.loads(payload)
        except ValueError:
            raise invalid from None
        if not isinstance(start_key, dict) or set(start_key) != shape.attributes:
            raise invalid
        if any(start_key[name] != value for name, value in shape.exact.items()):
            raise invalid
        for name, prefix in shape.prefixes.items():
            value = start_key[name]
            if not isinstance(value, str) or not value.startswith(prefix):
                raise invalid
        return start_key
