"""Bringing the boards of an earlier format, and rebuilds that stopped, up to date by themselves.

Readers never use a board the first format indexed: its ranks come from COUNT queries until it
is rebuilt. :func:`due_boards` finds the boards to rebuild in the index's state keys, a SCAN
page at a time: those the first format held complete (``ready``, or ``building`` for a rebuild
it had under way), those a change has set aside since (``rankindex.keys.OUTDATED``), those
complete in this format that a projector of the first format wrote to (during a rolling
upgrade, a process not yet upgraded holding the projector's lease: the first format's version
hash exists beside them, and readers do not use them), and those left ``building`` by a
rebuild that stopped before its end (no claim holds them) or that a rebuild still holds (to be
looked at again, should that rebuild stop). A board
``rank-index verify`` marked stale is not among them: it differs from the table, and an
operator looks at it before rebuilding it.

An :class:`Upgrader` runs beside a projector that can read the table (``leaderboard serve``,
``leaderboard rank-indexer``), in a task of its own, so that the stream's changes keep being
applied meanwhile (a board's changes are queued while it is rebuilt, and replayed after). While
its process holds the projector's lease it rebuilds the due boards one after the other, with a
log line each: all those a SCAN finds when it takes the lease, then each that a change sets
aside, as it is set aside. A board whose claim another rebuild holds, or whose rebuild failed,
is looked at again once such a claim may have lapsed. ``leaderboard rank-index rebuild
--outdated`` rebuilds the same boards once, for a projector that cannot read the table (the
Lambda).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from enum import StrEnum
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from dynamo.db import Db
from rankindex.cancellation import raise_if_cancelled
from rankindex.index import RankIndex, RebuildBusy, WrittenByEarlierVersion
from rankindex.keys import (
    BUILDING,
    FIRST_FORMAT_STATES,
    LEGACY_META,
    OUTDATED,
    READY,
    REBUILD,
    STATE,
    board_of_state,
    state_pattern,
)
from rankindex.lease import Lease
from rankindex.maintenance import CLAIM_MS

__all__ = ["FAILURE_PAUSE", "RETRY_SECONDS", "Due", "Upgrader", "board_due", "due_boards"]

log = logging.getLogger("leaderboard.rankindex")

SCAN_PAGE = 1_000
"""Keys a SCAN call looks at, and state keys checked in one round trip."""
MAX_WAITING = 10_000
"""Boards an upgrader keeps in mind to rebuild next; past that it scans for them instead."""
FAILURE_PAUSE = 10.0
"""Seconds an upgrader waits after a failed round (Redis or the table failing) before the
next, which scans again."""
RETRY_SECONDS = CLAIM_MS / 1000
"""Seconds before a board another rebuild held is looked at again: by then the claim of a
rebuild that stopped has lapsed."""


class Due(StrEnum):
    """Why a board is to be rebuilt."""

    FIRST_FORMAT = "first format"
    """The first format indexed it, complete."""
    OUTDATED = "outdated"
    """A change found it of the first format and deleted that format's keys."""
    EARLIER_WRITER = "written by an earlier version"
    """It is complete in this format, but a projector of the first format wrote to it: that
    format's version hash exists, and its sorted set may hold that format's members."""
    INTERRUPTED = "interrupted"
    """A rebuild of it stopped before its end."""
    UNDER_WAY = "under way"
    """A rebuild of it holds its claim: a rebuild asked for now is refused, and the board is
    looked at again once that claim may have lapsed (its rebuild stopped)."""


def due(state: Any, claimed: bool, written: bool) -> Due | None:
    """Why a board in ``state`` (its state key's value) is to be rebuilt, ``claimed`` telling
    whether a rebuild holds it and ``written`` whether the first format's version hash exists;
    None when it is not."""
    text = state.decode() if isinstance(state, bytes) else state
    if text in FIRST_FORMAT_STATES:
        return Due.FIRST_FORMAT
    if text == OUTDATED:
        return Due.OUTDATED
    if text == READY and written:
        return Due.EARLIER_WRITER
    if text == BUILDING:
        return Due.UNDER_WAY if claimed else Due.INTERRUPTED
    return None


async def _check(redis: Redis, ns: str, boards: Sequence[str]) -> list[tuple[str, Due]]:
    async with redis.pipeline(transaction=False) as pipe:
        for board in boards:
            pipe.get(STATE.format(ns=ns, board=board))
            pipe.exists(REBUILD.format(ns=ns, board=board))
            pipe.exists(LEGACY_META.format(ns=ns, board=board))
        answers: list[Any] = await pipe.execute()
    found = []
    for i, board in enumerate(boards):
        state, claimed, written = answers[3 * i : 3 * i + 3]
        reason = due(state, bool(claimed), bool(written))
        if reason is not None:
            found.append((board, reason))
    return found


async def board_due(redis: Redis, ns: str, board: str) -> Due | None:
    """Why the board is to be rebuilt now; None when it is not."""
    found = await _check(redis, ns, [board])
    return found[0][1] if found else None


async def due_boards(redis: Redis, ns: str) -> AsyncIterator[tuple[str, Due]]:
    """The boards of the namespace to rebuild, with why, as a SCAN of the state keys finds
    them (each at least once, a page at a time: what is kept in memory is one page)."""
    page: list[str] = []
    async for key in redis.scan_iter(match=state_pattern(ns), count=SCAN_PAGE):
        board = board_of_state(ns, key.decode() if isinstance(key, bytes) else str(key))
        if board is not None:
            page.append(board)
        if len(page) >= SCAN_PAGE:
            for found in await _check(redis, ns, page):
                yield found
            page = []
    if page:
        for found in await _check(redis, ns, page):
            yield found


class Upgrader:
    """Rebuilds the due boards of ``index`` from the table ``db``, one at a time, while
    ``lease`` (the projector's) is held by this process; with no lease, always."""

    def __init__(
        self,
        index: RankIndex,
        db: Db,
        lease: Lease | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.index = index
        self.db = db
        self.lease = lease
        self.clock = clock
        self.rebuilt = 0
        """Boards rebuilt since start."""
        self._waiting: dict[str, None] = {}
        """Boards a change set aside, in the order they were, to rebuild next."""
        self._busy: dict[str, None] = {}
        """Boards another rebuild held, or whose rebuild failed, to look at again at
        ``_retry_at``."""
        self._retry_at: float | None = None
        self._scan = True
        """A SCAN for due boards is to be made (at start, and when the lease is taken)."""
        self._held = False
        self._wake = asyncio.Event()
        index.on_outdated(self.found)

    def found(self, board: str) -> None:
        """A change set ``board`` aside: rebuild it next."""
        if len(self._waiting) < MAX_WAITING:
            self._waiting[board] = None
        else:
            self._scan = True
        self._wake.set()

    async def run(self, stop: asyncio.Event, interval: float = 1.0) -> None:
        """Rebuild due boards until ``stop`` is set, looking at least every ``interval``
        seconds; a failed round is logged and retried after :data:`FAILURE_PAUSE`."""
        while not stop.is_set():
            raise_if_cancelled()
            try:
                await self.step()
            except Exception:
                log.exception("rank index upgrade failed; retrying")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), FAILURE_PAUSE)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval)

    async def step(self) -> int:
        """Rebuild the boards due now, while the lease is held; how many were rebuilt."""
        self._wake.clear()
        if not self._holding():
            self._held = False
            return 0
        if not self._held:
            self._held, self._scan = True, True  # boards another holder left are found again
        if self._retry_at is not None and self.clock() >= self._retry_at:
            self._retry_at = None
            self._waiting.update(self._busy)
            self._busy.clear()
        try:
            return await self._rebuild_due()
        except BaseException:
            self._scan = True  # a board whose rebuild failed is found again
            raise

    async def _rebuild_due(self) -> int:
        rebuilt = 0
        if self._scan:
            self._scan = False
            async for board, reason in due_boards(self.index.redis, self.index.namespace):
                if not self._holding():
                    self._scan = True
                    return rebuilt
                rebuilt += await self._upgrade(board, reason)
        while self._waiting and self._holding():
            board = next(iter(self._waiting))
            del self._waiting[board]
            now_due = await board_due(self.index.redis, self.index.namespace, board)
            if now_due is not None:
                rebuilt += await self._upgrade(board, now_due)
        return rebuilt

    def _holding(self) -> bool:
        return self.lease is None or self.lease.held

    def _later(self, board: str) -> None:
        """Look at ``board`` again at the next retry."""
        if len(self._busy) < MAX_WAITING:
            self._busy[board] = None
        else:
            self._scan = True
        if self._retry_at is None:
            self._retry_at = self.clock() + RETRY_SECONDS

    async def _upgrade(self, board: str, reason: Due) -> int:
        """Rebuild one board. A failure of Redis ends the round (the next scans again); any
        other (the table's) is logged, and the board tried again later, after the others."""
        try:
            entries = await self.index.rebuild(self.db, board)
        except RebuildBusy:
            self._later(board)
            return 0
        except WrittenByEarlierVersion:
            log.warning(
                "rank index of board %s left outdated: a projector of an earlier version writes"
                " to it; trying again later",
                board,
                extra={"board": board},
            )
            self._later(board)
            return 0
        except (RedisError, OSError):
            raise
        except LookupError:
            log.warning(
                "rank index of board %s left as it is: the table has no such board",
                board,
                extra={"board": board},
            )
            return 0
        except Exception:
            log.exception(
                "rank index of board %s not rebuilt; trying again later",
                board,
                extra={"board": board},
            )
            self._later(board)
            return 0
        self.rebuilt += 1
        log.info(
            "rank index of board %s rebuilt (%s): %d entries",
            board,
            reason.value,
            entries,
            extra={"board": board, "entries": entries, "reason": reason.value},
        )
        return 1
