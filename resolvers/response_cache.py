"""The process's cache of whole answers to queries, kept exact by change notices.

An answer is stored with its dependencies (resolvers/dependencies.py) and evicted by the
first notice that may change one of them: a notice from the change feed (another instance's
write, or this one's as the table's stream reports it, but for the copy of a play this
process made: see resolvers/local_writes.py), or one this process makes itself when a write
through it commits (resolvers/changes.py), before the mutation answers. A lost feed position
clears everything (:meth:`ResponseCache.clear`).

A read that overlaps a change must not be stored: :meth:`ResponseCache.begin` gives the
execution a sequence number, and :meth:`ResponseCache.put` refuses the answer when a notice
received since then may change one of its dependencies (the last notices are remembered
for this; a read older than what is remembered is not stored).

The cache is bounded by bytes (least recently used answers go first) and by age: an answer
is served at most ``max_age`` seconds after it was read, whatever the notices said (a
backstop for a notice lost without the feed noticing).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from rankindex.notices import Notice, NoticeKind
from resolvers.dependencies import Dependency, PlayerName, affected

__all__ = [
    "ENTRY_OVERHEAD",
    "CacheRecorder",
    "ResponseCache",
    "Unrecorded",
]

ENTRY_OVERHEAD = 512
"""Bytes counted for each stored answer on top of its body and key (its bookkeeping)."""
DEPENDENCY_OVERHEAD = 96
"""Bytes counted for each dependency of a stored answer."""
REMEMBERED_NOTICES = 4096
"""Notices kept to judge whether a read that overlapped them may be stored."""


class CacheRecorder(Protocol):
    """Whoever counts what the cache does (the app's metrics)."""

    def cache_lookup(self, hit: bool) -> None:
        """An answer was looked for, and found or not."""

    def cache_evicted(self, count: int) -> None:
        """``count`` answers left the cache (changed, too old, or for room)."""

    def cache_bytes(self, total: int) -> None:
        """The cache now holds ``total`` bytes."""


class Unrecorded:
    """A recorder that keeps nothing."""

    def cache_lookup(self, hit: bool) -> None:
        return None

    def cache_evicted(self, count: int) -> None:
        return None

    def cache_bytes(self, total: int) -> None:
        return None


@dataclass(frozen=True)
class _Stored:
    body: bytes
    dependencies: tuple[Dependency, ...]
    stored_at: float
    size: int


def _board_of(dependency: Dependency) -> str | None:
    return None if isinstance(dependency, PlayerName) else dependency.board


def _player_of(dependency: Dependency) -> str | None:
    return dependency.player if isinstance(dependency, PlayerName) else None


class ResponseCache:
    def __init__(
        self,
        max_bytes: int,
        *,
        max_age: float,
        clock: Callable[[], float] = time.monotonic,
        recorder: CacheRecorder | None = None,
        remembered: int = REMEMBERED_NOTICES,
    ) -> None:
        if max_bytes <= 0 or max_age <= 0:
            raise ValueError("a response cache needs room and a maximum age above 0")
        self.max_bytes = max_bytes
        self.max_age = max_age
        self.clock = clock
        self.recorder: CacheRecorder = recorder or Unrecorded()
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        """Answers that left the cache (changed, too old, or for room) since start-up."""
        self._stored: OrderedDict[bytes, _Stored] = OrderedDict()
        self._by_board: dict[str, set[bytes]] = {}
        self._by_player: dict[str, set[bytes]] = {}
        self._sequence = 0
        self._recent: deque[tuple[int, Notice]] = deque(maxlen=remembered)
        self._floor = 0
        """Reads begun before this sequence number are never stored."""
        self.available: Callable[[], bool] = lambda: True
        """Whether the notices that keep the cache exact are arriving: while not, nothing
        is served or stored (the change feed's reader sets it)."""

    def __len__(self) -> int:
        return len(self._stored)

    def get(self, key: bytes) -> bytes | None:
        """The answer stored under ``key``, if any and young enough."""
        stored = self._stored.get(key) if self.available() else None
        if stored is not None and self.clock() - stored.stored_at > self.max_age:
            self._evict([key])
            stored = None
        self.recorder.cache_lookup(stored is not None)
        if stored is None:
            self.misses += 1
            return None
        self.hits += 1
        self._stored.move_to_end(key)
        return stored.body

    def status(self) -> dict[str, int]:
        """For /healthz: what the cache holds, its bound, and its lookups and evictions
        since start-up."""
        return {
            "entries": len(self._stored),
            "bytes": self.bytes,
            "maxBytes": self.max_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "evictions": self.evictions,
        }

    def begin(self) -> int:
        """The sequence number of a read starting now, for :meth:`put`."""
        return self._sequence

    def put(
        self, key: bytes, body: bytes, dependencies: Iterable[Dependency], started: int
    ) -> bool:
        """Store an answer read since ``started`` (from :meth:`begin`), unless a notice
        received meanwhile may have changed what it read, or it would not fit."""
        deps = tuple(dependencies)
        size = len(body) + len(key) + ENTRY_OVERHEAD + DEPENDENCY_OVERHEAD * len(deps)
        if (
            size > self.max_bytes
            or not self.available()
            or not self._unchanged_since(started, deps)
        ):
            return False
        if key in self._stored:
            self._evict([key])
        self._stored[key] = _Stored(body, deps, self.clock(), size)
        for dependency in deps:
            board, player = _board_of(dependency), _player_of(dependency)
            if board is not None:
                self._by_board.setdefault(board, set()).add(key)
            if player is not None:
                self._by_player.setdefault(player, set()).add(key)
        self.bytes += size
        self._make_room()
        self.recorder.cache_bytes(self.bytes)
        return True

    def notice(self, notice: Notice) -> None:
        """A change: evict every answer it may affect, and remember it for reads in flight."""
        if len(self._recent) == self._recent.maxlen:
            self._floor = self._recent[0][0]
        self._sequence += 1
        self._recent.append((self._sequence, notice))
        keys = (
            self._by_player.get(notice.player or "", set())
            if notice.kind is NoticeKind.PLAYER
            else self._by_board.get(notice.board or "", set())
        )
        self._evict(
            [
                key
                for key in keys
                if any(affected(d, notice) for d in self._stored[key].dependencies)
            ]
        )

    def board_changed(self, board: str) -> None:
        """Everything of the board may have changed."""
        self.notice(Notice(NoticeKind.BOARD, board=board))

    def player_changed(self, player: str) -> None:
        """The player's name may have changed."""
        self.notice(Notice(NoticeKind.PLAYER, player=player))

    def clear(self) -> None:
        """Anything may have changed: forget every answer, and every read in flight."""
        self._sequence += 1
        self._floor = self._sequence
        self._recent.clear()
        self._evict(list(self._stored))

    def _unchanged_since(self, started: int, dependencies: tuple[Dependency, ...]) -> bool:
        if started < self._floor:
            return False
        for sequence, notice in reversed(self._recent):
            if sequence <= started:
                break
            if any(affected(d, notice) for d in dependencies):
                return False
        return True

    def _make_room(self) -> None:
        over: list[bytes] = []
        room = self.bytes
        for key, stored in self._stored.items():
            if room <= self.max_bytes:
                break
            over.append(key)
            room -= stored.size
        self._evict(over)

    def _evict(self, keys: list[bytes]) -> None:
        for key in keys:
            stored = self._stored.pop(key)
            self.bytes -= stored.size
            for dependency in stored.dependencies:
                board, player = _board_of(dependency), _player_of(dependency)
                if board is not None:
                    _discard(self._by_board, board, key)
                if player is not None:
                    _discard(self._by_player, player, key)
        if keys:
            self.evictions += len(keys)
            self.recorder.cache_evicted(len(keys))
            self.recorder.cache_bytes(self.bytes)


def _discard(index: dict[str, set[bytes]], name: str, key: bytes) -> None:
    keys = index.get(name)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[name]
