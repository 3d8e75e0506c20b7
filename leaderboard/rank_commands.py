"""The rank index's commands: the projector, and rebuilding or verifying a board, or
rebuilding every board an earlier version indexed."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TextIO

from redis.asyncio import Redis

from dynamo.db import Db
from dynamo.streams import TableStream
from leaderboard.backend import Backend, open_stream, open_table
from leaderboard.config import Settings
from rankindex.index import RankIndex, RebuildBusy, WrittenByEarlierVersion
from rankindex.lease import Lease
from rankindex.projector import Projector
from rankindex.upgrade import Upgrader, due_boards

__all__ = ["rebuild", "rebuild_outdated", "run_projector", "verify"]


@dataclass(frozen=True)
class _Handles:
    db: Db
    index: RankIndex
    stream: TableStream


@asynccontextmanager
async def _open(settings: Settings, backend: Backend) -> AsyncIterator[_Handles]:
    if not settings.redis_url:
        raise SystemExit("set LEADERBOARD_REDIS_URL to the rank index's Redis")
    redis = Redis.from_url(settings.redis_url)
    async with (
        open_table(settings, backend.credentials) as db,
        open_stream(settings, backend.credentials, db) as stream,
    ):
        try:
            yield _Handles(db, RankIndex(redis, settings.table), stream)
        finally:
            await redis.aclose()


async def run_projector(settings: Settings, backend: Backend) -> None:
    """Keep the index in step with the table's stream until interrupted (while this process
    holds the projector's lease: several may run, one projects), rebuilding the boards an
    earlier version indexed."""
    async with _open(settings, backend) as handles:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        print(f"projecting the stream of {settings.table} into {settings.redis_url}", flush=True)
        lease = Lease(handles.index.redis, settings.table)
        upgrader = Upgrader(handles.index, handles.db, lease)
        await Projector(handles.stream, handles.index, lease, upgrader=upgrader).run(stop)


async def rebuild(settings: Settings, backend: Backend, board: str) -> int:
    """Rebuild one board's index; the exit status (1, with the reason on stderr, when
    another rebuild of the board is under way, a projector of an earlier version kept writing
    to it, or the table has no such board)."""
    async with _open(settings, backend) as handles:
        try:
            count = await handles.index.rebuild(handles.db, board)
        except (RebuildBusy, WrittenByEarlierVersion, LookupError) as error:
            print(f"{board}: {_reason(error)}", file=sys.stderr, flush=True)
            return 1
    print(f"rebuilt the index of {board}: {count} entries", flush=True)
    return 0


async def rebuild_outdated(
    settings: Settings, backend: Backend, *, out: TextIO | None = None
) -> int:
    """Rebuild, one after the other, every board an earlier version indexed or wrote to (and
    every board a rebuild left unfinished), with a line per board; the exit status (1 when a
    board was left: another rebuild held it, a projector of an earlier version kept writing to
    it, or the table has no such board)."""
    out = out or sys.stdout
    rebuilt = left = 0
    async with _open(settings, backend) as handles:
        index = handles.index
        async for board, reason in due_boards(index.redis, index.namespace):
            try:
                count = await index.rebuild(handles.db, board)
            except (RebuildBusy, WrittenByEarlierVersion, LookupError) as error:
                print(f"{board}: left as it is: {_reason(error)}", file=out, flush=True)
                left += 1
                continue
            print(f"rebuilt the index of {board} ({reason}): {count} entries", file=out, flush=True)
            rebuilt += 1
    if not rebuilt and not left:
        print("no board of an earlier format to rebuild", file=out, flush=True)
    return 1 if left else 0


def _reason(error: Exception) -> str:
    return str(error.args[0]) if error.args else type(error).__name__


async def verify(settings: Settings, backend: Backend, board: str) -> bool:
    async with _open(settings, backend) as handles:
        report = await handles.index.verify(handles.db, board)
    print(f"{board}: {report.entries} entries in the table")
    for label, members in (
        ("missing from the index", report.missing),
        ("in the index, not the table", report.extra),
        ("with another score", report.wrong_score),
    ):
        if members:
            print(f"  {len(members)} {label}: {', '.join(members[:10])}")
    print("  index equals table" if report.ok else "  marked stale: rebuild it")
    return report.ok
