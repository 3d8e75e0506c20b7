"""Every Redis key of the index, in one place, and the byte form of a sorted set's member.

``<ns>`` is the namespace (the table's name), so that several tables can share a Redis.
``{<board>}`` is a Redis Cluster hash tag: all of a board's keys share a slot, so a script
given one of them may touch the others.
"""

from __future__ import annotations

import re

__all__ = [
    "BUILDING",
    "CHECKPOINT",
    "FEED",
    "FEED_LENGTH",
    "FIRST_FORMAT_STATES",
    "HEARTBEAT",
    "LAYOUT",
    "LEASE",
    "LEGACY_META",
    "OUTDATED",
    "PENDING",
    "PLAYERS",
    "READY",
    "REBUILD",
    "STALE",
    "STATE",
    "TIE_BYTES",
    "ZSET",
    "board_keys",
    "board_of_state",
    "member",
    "member_parts",
    "member_text",
    "state_pattern",
    "tie_bytes",
    "tie_text",
]

ZSET = "rank:{ns}:{{{board}}}"
"""Sorted set: one member per entry, :func:`member` (the entry's tie value in 6 bytes, then
its player id), score the entry's rank value (exact: at most 15 digits fit a double). Higher
is better; equal scores order by member, byte by byte, which lists the earlier-attained
first in a descending read, exactly as the Score items' sort keys do."""
PLAYERS = "rank:{ns}:{{{board}}}:p:{gen}:{bucket}"
"""Hash, one of a board's player buckets: player id -> the player's record (see
rankindex.players). A board's players are spread over buckets by a hash of their ids
(linear hashing), so that each bucket keeps to a small listpack."""
LAYOUT = "rank:{ns}:{{{board}}}:layout"
"""Hash: ``gen`` (the generation of the player buckets in use), ``level`` and ``split``
(how many buckets there are: 2**level + split) and ``players`` (the records they hold)."""
STATE = "rank:{ns}:{{{board}}}:state"
""":data:`READY` (complete since the board's creation or a rebuild), :data:`BUILDING`,
:data:`OUTDATED` or :data:`STALE`; one of :data:`FIRST_FORMAT_STATES` is a board indexed in
the first format."""
PENDING = "rank:{ns}:{{{board}}}:pending"
"""List of changes that arrived while the board was being rebuilt."""
REBUILD = "rank:{ns}:{{{board}}}:rebuild"
"""String: the token of the rebuild under way (its claim on the board, a
:class:`~rankindex.lease.Lease`), expiring unless its holder renews it. One rebuild of a board
runs at a time, and the apply script starts or swaps in a rebuild only while it holds the
claim."""
LEGACY_META = "rank:{ns}:{{{board}}}:meta"
"""The version hash of the first format (player id -> ``<version>|<member>``): deleted,
with that format's sorted set, the first time a change or a rebuild meets the board. Beside a
board of this format it tells that a projector of the first format (a process not yet
upgraded, during a rolling upgrade) wrote to it: readers do not use such a board, and it is
rebuilt."""
CHECKPOINT = "rank:{ns}:checkpoint:{shard}"
"""The last sequence number applied from one stream shard."""
HEARTBEAT = "rank:{ns}:heartbeat"
"""Hash: ``caughtUpAt`` (epoch ms the projector last had nothing left to read),
``appliedAt`` and ``recordAt`` (epoch ms of the last applied change, and of its play)."""
FEED = "rank:{ns}:feed"
"""Stream: the change feed, one entry (a notice, see rankindex.notices) per change the
projector read from the table's stream, trimmed to about ``FEED_LENGTH`` entries. Every
instance reads it and wakes its own subscribers."""
FEED_LENGTH = 10_000
"""About how many notices the feed keeps (trimmed approximately, as Redis does cheaply): a
reader that falls further behind than that has lost its place and resyncs."""
LEASE = "rank:{ns}:lease"
"""String: the token of the one projector that may apply the table's stream, expiring unless
its holder renews it."""

READY = "ready/2"
BUILDING = "building/2"
STALE = "stale"
"""The board's index differs from the table (``rank-index verify`` found it so, or the first
format held the board incomplete): readers count in the table until an operator rebuilds it."""
OUTDATED = "outdated/2"
"""The board was complete in the first format, or in this one but written to by a projector
of the first format, and a change has deleted that format's keys: readers count in the table
until it is rebuilt, which the projector does by itself where it can read the table
(rankindex.upgrade)."""
FIRST_FORMAT_STATES = frozenset({"ready", "building"})
"""The states of a board complete (or being rebuilt) in the first format; its ``stale`` is
this format's :data:`STALE`."""

TIE_BYTES = 6
"""A tie value (at most 13 decimal digits, under 2**44) as a big-endian number: the same
order as the digits, in 6 bytes (the first of which is at most 9)."""
_TIE_DIGITS = 13


def board_keys(ns: str, board: str) -> list[str]:
    """The keys the scripts take, in order: zset, state, layout, pending."""
    return [t.format(ns=ns, board=board) for t in (ZSET, STATE, LAYOUT, PENDING)]


def state_pattern(ns: str) -> str:
    """A SCAN pattern matching the state key of every board of the namespace."""
    return "rank:" + re.sub(r"([*?\[\]\\])", r"\\\1", ns) + ":{*}:state"


def board_of_state(ns: str, key: str) -> str | None:
    """The board whose state key ``key`` is (None for another key)."""
    prefix, suffix = f"rank:{ns}:{{", "}:state"
    if not (key.startswith(prefix) and key.endswith(suffix)) or len(key) <= len(prefix + suffix):
        return None
    return key[len(prefix) : -len(suffix)]


def tie_bytes(tie_value: str) -> bytes:
    """The 6-byte form of a tie value (``dynamo.scores.tie_value``)."""
    return int(tie_value).to_bytes(TIE_BYTES, "big")


def tie_text(tie: bytes) -> str:
    """The tie value of its 6-byte form (the inverse of :func:`tie_bytes`)."""
    return str(int.from_bytes(tie, "big")).zfill(_TIE_DIGITS)


def member(tie_value: str, player_id: str) -> bytes:
    """The sorted set's member of an entry (see :data:`ZSET`)."""
    return tie_bytes(tie_value) + player_id.encode()


def member_text(raw: bytes) -> str:
    """A member as text, ``<tieValue>#<playerId>``: how the index names entries to its
    callers."""
    return f"{tie_text(raw[:TIE_BYTES])}#{raw[TIE_BYTES:].decode()}"


def member_parts(text: str) -> tuple[str, str]:
    """The tie value and the player id of a member's text (see :func:`member_text`)."""
    tie_value, player_id = text.split("#", 1)
    return tie_value, player_id
