"""What this process has written lately, by board: the reads that must show it.

The table's reads of a board's entries and of its item are eventually consistent unless
asked otherwise: a read made just after a write may, rarely, miss it. A cached answer or a
subscriber's push so read would stay wrong until the write's notice arrives through the
change feed. For a few seconds after this process wrote to a board, the reads whose result
is kept (an answer the response cache may store, the shared read of a board's subscribers)
are made with ConsistentRead: they show every write this process has committed.

The same record tells the change feed's copy of a change this process made from any
other: the instance that commits a play has already woken its board's subscribers and
evicted what the play changed from its response cache, before the play's notice comes back
through the feed. A play's entry is known by its board, its player, the version of its
entry guard and its rank value, all of which its notice carries; that notice, arriving
within the window, is handled already (:meth:`LocalWrites.handled`) and wakes nobody a
second time. Within the window the reads it would have caused are consistent, and so show
the play: dropping its copy loses nothing. A notice arriving later, or one that cannot be
matched (its version unknown), is handled as any other.

The record is bounded: the boards and entries written within the window, at most
``max_boards`` of each (the least recently written are forgotten first; a board forgotten
early is read as any other, eventually consistent, and an entry's notice then wakes its
subscribers once more).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from rankindex.notices import Notice, NoticeKind

__all__ = ["MAX_BOARDS", "WINDOW", "LocalWrites"]

WINDOW = 5.0
"""Seconds after a write through this process during which its board is read consistently."""
MAX_BOARDS = 10_000
"""Boards remembered at most, and entries remembered at most."""

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class _Change:
    """A play's change of one entry, as its notice will show it."""

    version: int
    rank_value: int
    at: float


class LocalWrites:
    def __init__(
        self,
        *,
        window: float = WINDOW,
        max_boards: int = MAX_BOARDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if window <= 0 or max_boards <= 0:
            raise ValueError("a record of local writes needs a window and room above 0")
        self.window = window
        self.max_boards = max_boards
        self.clock = clock
        self._boards: OrderedDict[str, float] = OrderedDict()
        """Each board's latest write through this process, oldest first."""
        self._changes: OrderedDict[tuple[str, str], _Change] = OrderedDict()
        """Each entry's (board, player) latest change through this process, oldest first."""
        self.matched = 0
        """Notices found to be of a change this process made (and so dropped)."""

    def __len__(self) -> int:
        return len(self._boards)

    def wrote(self, board: str) -> None:
        """A write to ``board`` through this process has committed."""
        now = self.clock()
        _put(self._boards, board, now)
        self._expire(self._boards, lambda at: at, now)

    def recent(self, board: str) -> bool:
        """Whether this process wrote to ``board`` within the window."""
        at = self._boards.get(board)
        return at is not None and self.clock() - at < self.window

    def played(self, board: str, player: str, version: int, rank_value: int) -> None:
        """A play through this process has committed the player's entry on ``board`` at
        that version of its entry guard, with that rank value (the board is recorded as
        written too: its reads are consistent)."""
        now = self.clock()
        self.wrote(board)
        _put(self._changes, (board, player), _Change(version, rank_value, now))
        self._expire(self._changes, lambda change: change.at, now)

    def handled(self, notice: Notice) -> bool:
        """Whether ``notice`` (from the change feed) reports a play this process made within
        the window: its subscribers were woken and its cache evicted when it committed.

        A notice of the same entry that is not that play's (a later change of the entry, or
        its guard deleted) forgets the play: only the entry's very next notice of that
        version can be its copy. An earlier change's notice, arriving late, leaves it."""
        if notice.board is None or notice.player is None:
            return False
        key = (notice.board, notice.player)
        change = self._changes.get(key)
        if change is None:
            return False
        if notice.version is not None and notice.version < change.version:
            return False
        del self._changes[key]
        if (
            notice.kind is NoticeKind.PUT
            and notice.version == change.version
            and notice.after == change.rank_value
            and self.clock() - change.at < self.window
            and self.recent(notice.board)  # its reads are still consistent
        ):
            self.matched += 1
            return True
        return False

    def forget(self) -> None:
        """Notices may have been lost: forget the plays (a copy still to come is handled as
        any other notice)."""
        self._changes.clear()

    def _expire(self, record: OrderedDict[K, V], at: Callable[[V], float], now: float) -> None:
        oldest = now - self.window
        while record and (
            len(record) > self.max_boards or at(next(iter(record.values()))) <= oldest
        ):
            record.popitem(last=False)


def _put(record: OrderedDict[K, V], key: K, value: V) -> None:
    record[key] = value
    record.move_to_end(key)
