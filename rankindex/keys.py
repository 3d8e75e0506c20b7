"""Every Redis key of the index, in one place. ``<ns>`` is the namespace (the table's name),
so that several tables can share a Redis. ``{<board>}`` is a Redis Cluster hash tag: a
board's keys share a slot, so the apply script can touch them together."""

from __future__ import annotations

__all__ = [
    "CHECKPOINT",
    "FEED",
    "FEED_LENGTH",
    "HEARTBEAT",
    "LEASE",
    "META",
    "PENDING",
    "STATE",
    "ZSET",
    "board_keys",
    "member",
    "member_parts",
]

ZSET = "rank:{ns}:{{{board}}}"
"""Sorted set: member ``<tieValue>#<playerId>``, score the entry's rank value (exact: at most
15 digits fit a double). Higher is better; equal scores order by member, which lists the
earlier-attained first in a descending read, exactly as the Score items' sort keys do."""
META = "rank:{ns}:{{{board}}}:meta"
"""Hash: player id -> ``<version>|<member>`` (an empty member once removed)."""
STATE = "rank:{ns}:{{{board}}}:state"
"""``ready`` (complete since the board's creation or a rebuild), ``building`` or ``stale``."""
PENDING = "rank:{ns}:{{{board}}}:pending"
"""List of changes that arrived while the board was being rebuilt."""
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


def board_keys(ns: str, board: str) -> list[str]:
    """The keys the apply script takes, in order: zset, meta, state, pending."""
    return [t.format(ns=ns, board=board) for t in (ZSET, META, STATE, PENDING)]


def member(tie_value: str, player_id: str) -> str:
    """The sorted set's member of an entry (see :data:`ZSET`)."""
    return f"{tie_value}#{player_id}"


def member_parts(member: str) -> tuple[str, str]:
    """The tie value and the player id of a member (the inverse of :func:`member`)."""
    tie_value, player_id = member.split("#", 1)
    return tie_value, player_id
