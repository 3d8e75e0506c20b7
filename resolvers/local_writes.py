"""What this process has written lately, by board: the reads that must show it.

The table's reads of a board's entries and of its item are eventually consistent unless
asked otherwise: a read made just after a write may, rarely, miss it. A cached answer or a
subscriber's push so read would stay wrong until the write's notice arrives through the
change feed. For a few seconds after this process wrote to a board, the reads whose result
is kept (an answer the response cache may store, the shared read of a board's subscribers)
are made with ConsistentRead: they show every write this process has committed.

The record is bounded: the boards written within the window, at most ``max_boards`` of
them (the least recently written are forgotten first; a board forgotten early is read as
any other, eventually consistent).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["MAX_BOARDS", "WINDOW", "LocalWrites"]

WINDOW = 5.0
"""Seconds after a write through this process during which its board is read consistently."""
MAX_BOARDS = 10_000
"""Boards remembered at most."""


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

    def __len__(self) -> int:
        return len(self._boards)

    def wrote(self, board: str) -> None:
        """A write to ``board`` through this process has committed."""
        self._boards[board] = self.clock()
        self._boards.move_to_end(board)
        self._expire()

    def recent(self, board: str) -> bool:
        """Whether this process wrote to ``board`` within the window."""
        at = self._boards.get(board)
        return at is not None and self.clock() - at < self.window

    def _expire(self) -> None:
        boards, oldest = self._boards, self.clock() - self.window
        while boards and (len(boards) > self.max_boards or next(iter(boards.values())) <= oldest):
            boards.popitem(last=False)
