"""``leaderboard close-periods``: the close of the boards whose period is over
(dynamo/closing.py), each board's progress on stderr and a line per closed board on stdout."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TextIO

from dynamo.closing import CloseProgress, Phase, close_board, due_boards
from dynamo.db import Db
from dynamo.errors import LeaderboardError
from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, count_shard_keys, read_board
from leaderboard.backend import Backend, open_table
from leaderboard.config import Settings

__all__ = ["BAR_WIDTH", "STEPS", "CloseBar", "close_periods"]

STEPS = {
    Phase.COUNTS: "freezing counts",
    Phase.ENTRIES: "freezing entries",
    Phase.RESULTS: "writing results",
}
"""What each step of a close is called in its progress."""
BAR_WIDTH = 30
"""Characters of a bar drawn on a terminal."""


class CloseBar:
    """One board's close as it goes, on ``stream``. On a terminal (``in_place``) a bar for each
    step, redrawn in place (a carriage return before each drawing) and left on a line of its
    own once the step is over; elsewhere one line per step, written once the step is over or
    cut off. Each gives the board, the step, how far it went of how many (count shards for
    freezing counts, entrants for the others) and the percent. A step the close had already
    done before this run shows nothing; freezing counts shows only its start and its end."""

    def __init__(self, stream: TextIO, board_id: str, *, in_place: bool) -> None:
        self.stream = stream
        self.board_id = board_id
        self.in_place = in_place
        self._step: Phase | None = None
        self._done = 0
        self._total: int | None = None
        self._drawn = 0

    def begin(self, step: Phase, total: int | None) -> None:
        """A step starts (the one the close reports nothing of until it is over)."""
        self._end(complete=True)
        self._step, self._done, self._total = step, 0, total
        self._draw()

    def __call__(self, progress: CloseProgress) -> None:
        if progress.phase != self._step:
            # The close reports a step only once the one before it is over.
            self._end(complete=True)
            if progress.phase == Phase.FINAL:
                return
            self._step, self._done = progress.phase, progress.done
        else:
            # A step's passes may each count from 0 again: the furthest one is shown.
            self._done = max(self._done, progress.done)
        self._total = progress.total
        self._draw()

    def stop(self) -> None:
        """The step under way cut off (the close failed): as far as it went."""
        self._end(complete=False)

    def line(self, *, bar: bool = False) -> str:
        """The step under way, as it is drawn (with the bar itself when ``bar``)."""
        assert self._step is not None
        total = self._total
        if total is None:
            counted, percent, filled = f"{self._done}/?", "?", 0
        else:
            ratio = min(self._done, total) / total if total else 1.0
            counted, percent = f"{self._done}/{total}", f"{int(100 * ratio)}"
            filled = int(BAR_WIDTH * ratio)
        drawn = f" [{'#' * filled}{'.' * (BAR_WIDTH - filled)}]" if bar else ""
        return f"{self.board_id}: {STEPS[self._step]}{drawn} {counted} ({percent}%)"

    def _draw(self) -> None:
        if not self.in_place or self._step is None:
            return
        text = self.line(bar=True)
        self.stream.write("\r" + text + " " * max(0, self._drawn - len(text)))
        self.stream.flush()
        self._drawn = len(text)

    def _end(self, *, complete: bool) -> None:
        if self._step is None:
            return
        if complete and self._total is not None:
            self._done = self._total
        if self.in_place:
            self._draw()
            self.stream.write("\n")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
        self._step, self._drawn = None, 0


async def close_periods(
    settings: Settings,
    backend: Backend,
    board_ids: Sequence[str],
    grace: timedelta,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Close ``board_ids`` (each must be due), or every due board when none is named, one
    after the other; the exit status (1 after a LeaderboardError, whose message is printed)."""
    out = out or sys.stdout
    err = err or sys.stderr
    closed = 0
    async with open_table(settings, backend.credentials) as db:
        try:
            for board_id in await _to_close(db, board_ids, now(), grace):
                outbox = settings.webhook_url is not None
                board = await _close(db, board_id, grace, err, outbox=outbox)
                print(f"closed {board_id}: {board.final_count or 0} entrants", file=out, flush=True)
                closed += 1
        except LeaderboardError as error:
            print(f"{error.code}: {error.message}", file=err, flush=True)
            return 1
    if not closed:
        print("nothing to close", file=out, flush=True)
    return 0


async def _to_close(db: Db, board_ids: Sequence[str], at: datetime, grace: timedelta) -> list[str]:
    """The boards to close in turn: the named ones, else every board due at ``at``.
    close_board refuses a board that is missing, has no end or is not due yet before it writes
    anything, so the named boards that are not due go first: a refusal comes before any due
    board is touched."""
    due = await due_boards(db, at - grace)
    if not board_ids:
        return due
    waiting = set(due)
    return sorted(dict.fromkeys(board_ids), key=lambda board_id: board_id in waiting)


async def _close(
    db: Db, board_id: str, grace: timedelta, err: TextIO, *, outbox: bool
) -> LeaderboardItem:
    at = now()
    board = await read_board(db, board_id, consistent=True, count=False)
    bar = CloseBar(err, board_id, in_place=err.isatty())
    if board is not None and _counts_ahead(board, at, grace):
        bar.begin(Phase.COUNTS, len(count_shard_keys(board)))
    try:
        return await close_board(db, board_id, at=at, grace=grace, progress=bar, outbox=outbox)
    finally:
        bar.stop()


def _counts_ahead(board: LeaderboardItem, at: datetime, grace: timedelta) -> bool:
    """Whether the close of ``board`` at ``at`` freezes its count shards: it has not yet, and
    the board is due (else the close refuses it first)."""
    if board.closed_at is not None:
        return False
    if board.closing_since is not None:
        return board.close_phase == Phase.COUNTS
    return board.ends_at is not None and at >= board.ends_at + grace
