"""The two ways the rank index has stored a board, as the benchmark loads them.

- ``before``: the first format. The sorted set's member is ``<13-digit tie value>#<player
  id>`` and one hash, ``rank:{<board>}:meta``, holds for each player ``<version>|<member>``.
- ``after``: the current format (rankindex/keys.py, rankindex/players.py). The member is the
  tie value in 6 bytes then the player id, and each player's record (tie and version) is in
  one of the board's small listpack hashes, its buckets, sized as a rebuild sizes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import redis

from rankindex.keys import LAYOUT, LEGACY_META, READY, STATE, ZSET
from rankindex.players import bucket_key, entry_commands, layout_for

__all__ = ["BOARD", "FORMATS", "Format", "Loaded", "load"]

BOARD = "bench"
FORMATS = ("before", "after")
ZSET_KEY = ZSET.format(ns=BOARD, board=BOARD)


@dataclass(frozen=True)
class Format:
    name: str
    zset_key: str
    state_keys: list[str]
    """The keys of the per-player state: the meta hash, or every bucket."""
    other_keys: list[str]
    """The board's other keys (state, layout)."""


@dataclass(frozen=True)
class Loaded:
    format: Format
    members: list[bytes]
    """Every member as the sorted set holds it, in load order."""
    players: Sequence[str]


def _legacy_member(tie: str, player: str) -> bytes:
    return f"{tie}#{player}".encode()


def load(
    client: redis.Redis,
    name: str,
    players: Sequence[str],
    ties: Sequence[str],
    scores: Sequence[int],
    chunk: int,
) -> Loaded:
    """Load one board of every (player, tie value, rank value) in pipelines of ``chunk``
    entries, in the format ``name``."""
    if name == "before":
        return _load_before(client, players, ties, scores, chunk)
    return _load_after(client, players, ties, scores, chunk)


def _chunks(count: int, chunk: int) -> Iterator[range]:
    for start in range(0, count, chunk):
        yield range(start, min(count, start + chunk))


def _load_before(
    client: redis.Redis,
    players: Sequence[str],
    ties: Sequence[str],
    scores: Sequence[int],
    chunk: int,
) -> Loaded:
    meta = LEGACY_META.format(ns=BOARD, board=BOARD)
    members = [_legacy_member(t, p) for t, p in zip(ties, players, strict=True)]
    for part in _chunks(len(players), chunk):
        pipe = client.pipeline(transaction=False)
        pipe.zadd(ZSET_KEY, {members[i]: scores[i] for i in part})
        pipe.hset(meta, mapping={players[i]: b"1|" + members[i] for i in part})
        pipe.execute()
    state = STATE.format(ns=BOARD, board=BOARD)
    client.set(state, "ready")
    return Loaded(Format("before", ZSET_KEY, [meta], [state]), members, players)


def _load_after(
    client: redis.Redis,
    players: Sequence[str],
    ties: Sequence[str],
    scores: Sequence[int],
    chunk: int,
) -> Loaded:
    layout = layout_for(len(players), gen=1)
    members: list[bytes] = []
    for part in _chunks(len(players), chunk):
        rows = [(players[i], ties[i], scores[i], 1) for i in part]
        zadd, buckets = entry_commands(BOARD, BOARD, layout, rows)
        members.extend(zadd)
        pipe = client.pipeline(transaction=False)
        pipe.zadd(ZSET_KEY, zadd)
        for key, records in buckets.items():
            pipe.hset(key, mapping=records)  # type: ignore[arg-type]
        pipe.execute()
    layout_key = LAYOUT.format(ns=BOARD, board=BOARD)
    client.hset(
        layout_key,
        mapping={"gen": 1, "level": layout.level, "split": 0, "players": len(players)},
    )
    state = STATE.format(ns=BOARD, board=BOARD)
    client.set(state, READY)
    buckets_keys = [bucket_key(BOARD, BOARD, layout, i) for i in range(layout.buckets)]
    return Loaded(Format("after", ZSET_KEY, buckets_keys, [state, layout_key]), members, players)
