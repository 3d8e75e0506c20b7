"""A board's player records: what the index keeps of each player, and where.

A record holds the entry's tie value (6 bytes, so the player's member is ``tie + player id``)
and the entry guard's version, written in decimal: ``<tie><version>``; a removed entry's
record is ``-<version>`` (a tie's first byte is at most 9, never ``-``). The version is what
makes a replayed or reordered change harmless: one is applied only if newer.

Records live in many small hashes, the board's buckets (``rankindex.keys.PLAYERS``), so that
each stays a listpack (Redis's compact encoding, up to 128 fields): a record then costs its
player id, its value and 2 bytes of framing each, where a field of one big hash costs about
50 bytes more. A player's bucket follows from a hash of its id by linear hashing: there are
``2**level + split`` buckets; a player whose hash modulo ``2**level`` falls below ``split``
takes its hash modulo ``2**(level + 1)``. Each new record past :data:`FILL` per bucket on
average splits the next bucket in turn, so buckets stay near that size as the board grows.
The apply and ranks scripts compute the same buckets (``redis.sha1hex``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from rankindex.keys import PLAYERS, TIE_BYTES, member, tie_bytes

__all__ = [
    "FILL",
    "Layout",
    "Row",
    "bucket_index",
    "bucket_key",
    "entry_commands",
    "layout_for",
    "player_hash",
    "record",
    "record_version",
]

FILL = 40
"""Records per bucket on average before the next bucket splits. Linear hashing leaves the
buckets of a round not yet split with up to twice that: 80 on average, well under the 128
fields that keep a hash a listpack."""


@dataclass(frozen=True)
class Layout:
    """How a board's records are spread: the generation of its buckets and their count."""

    gen: int = 1
    level: int = 0
    split: int = 0

    @property
    def buckets(self) -> int:
        return (1 << self.level) + self.split


Row = tuple[str, str, int, int]
"""An entry as the index holds it: (player id, tie value, rank value, version)."""


def player_hash(player_id: str) -> int:
    """The 32-bit hash that places a player's record: the first 4 bytes of the SHA-1 of its
    id (``redis.sha1hex`` in the scripts)."""
    return int(hashlib.sha1(player_id.encode()).hexdigest()[:8], 16)


def bucket_index(player_id: str, layout: Layout) -> int:
    """The bucket holding the player's record."""
    h = player_hash(player_id)
    index = h % (1 << layout.level)
    if index < layout.split:
        index = h % (1 << (layout.level + 1))
    return index


def bucket_key(ns: str, board: str, layout: Layout, index: int) -> str:
    return PLAYERS.format(ns=ns, board=board, gen=layout.gen, bucket=index)


def layout_for(records: int, gen: int) -> Layout:
    """The layout of a board built whole with about ``records`` records: as few buckets
    (a power of two) as keep them at most :data:`FILL` each."""
    level = 0
    while records > FILL << level:
        level += 1
    return Layout(gen=gen, level=level)


def record(tie_value: str, version: int) -> bytes:
    """A live entry's record (see the module's description)."""
    return tie_bytes(tie_value) + str(version).encode()


def record_version(raw: bytes) -> int:
    """The version a record holds, live or removed."""
    return int(raw[1:] if raw[:1] == b"-" else raw[TIE_BYTES:])


def entry_commands(
    ns: str, board: str, layout: Layout, rows: Iterable[Row]
) -> tuple[dict[bytes, int], dict[str, dict[str, bytes]]]:
    """What writing ``rows`` into a board of ``layout`` takes: the sorted set's members with
    their scores, and each bucket's records by player."""
    members: dict[bytes, int] = {}
    buckets: dict[str, dict[str, bytes]] = {}
    for player, tie, score, version in rows:
        members[member(tie, player)] = score
        key = bucket_key(ns, board, layout, bucket_index(player, layout))
        buckets.setdefault(key, {})[player] = record(tie, version)
    return members, buckets
