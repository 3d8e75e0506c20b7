"""The rank index's commands: the projector, and rebuilding or verifying a board."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from redis.asyncio import Redis

from dynamo.db import Db
from dynamo.streams import TableStream
from leaderboard.backend import Backend, open_stream, open_table
from leaderboard.config import Settings
from rankindex.index import RankIndex
from rankindex.lease import Lease
from rankindex.projector import Projector

__all__ = ["rebuild", "run_projector", "verify"]


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
    holds the projector's lease: several may run, one projects)."""
    async with _open(settings, backend) as handles:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        print(f"projecting the stream of {settings.table} into {settings.redis_url}", flush=True)
        lease = Lease(handles.index.redis, settings.table)
        await Projector(handles.stream, handles.index, lease).run(stop)


async def rebuild(settings: Settings, backend: Backend, board: str) -> int:
    async with _open(settings, backend) as handles:
        return await handles.index.rebuild(handles.db, board)


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
