"""Opaque, signed pagination cursors wrapping a DynamoDB exclusive start key, and the cursors
of a page's items, each signed only once it is read."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, overload

from dynamo.errors import ErrorCode, LeaderboardError, Subject

__all__ = ["CursorCodec", "CursorShape", "LazyCursors", "picked"]

_MAX_CURSOR = 1024
_TAG_BYTES = 16

S = TypeVar("S")


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


class _Cursors(Sequence[str]):
    """A sequence of cursors equal to any sequence of the same strings (comparing them reads
    every cursor of both)."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))


class LazyCursors(_Cursors, Generic[S]):
    """The cursors of a page's items, one per source (a raw item), each signed by ``codec``
    the first time it is read and remembered from then on: a page whose cursors no one reads
    signs none of them. Each is ``codec.encode(start_key(source))``, the cursor an eager page
    would hold."""

    def __init__(
        self,
        codec: CursorCodec,
        sources: Sequence[S],
        start_key: Callable[[S], Mapping[str, str]],
    ) -> None:
        self._codec = codec
        self._sources = sources
        self._start_key = start_key
        self._signed: list[str | None] = [None] * len(sources)

    def __len__(self) -> int:
        return len(self._signed)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        signed = self._signed[index]
        if signed is None:
            signed = self._codec.encode(self._start_key(self._sources[index]))
            self._signed[index] = signed
        return signed

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        signed = sum(cursor is not None for cursor in self._signed)
        return f"LazyCursors({len(self)} cursors, {signed} signed)"


class _Picked(_Cursors):
    """The cursors at ``positions`` of ``cursors``, each read from it when it is read."""

    def __init__(self, cursors: Sequence[str], positions: Sequence[int]) -> None:
        self._cursors = cursors
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._cursors[n] for n in self._positions[index]]
        return self._cursors[self._positions[index]]

    def __repr__(self) -> str:
        return f"picked({self._cursors!r}, {list(self._positions)!r})"


def picked(cursors: Sequence[str], positions: Sequence[int]) -> Sequence[str]:
    """The cursors at ``positions`` of ``cursors``, in that order, read from ``cursors`` only
    when they are read (lazy cursors stay unsigned until then)."""
    return _Picked(cursors, positions)
