"""The event loop the service runs on (leaderboard/loops.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import uvloop
from aiohttp import web

from leaderboard import loops
from leaderboard.config import Limits
from leaderboard.workers import WorkerPool


@pytest.fixture
def policy() -> Iterator[None]:
    """Leave the process's loop policy as the test found it."""
    before = asyncio.get_event_loop_policy()
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(before)


def test_uvloop_is_the_loop_where_it_is_installed(policy: None) -> None:
    assert loops.available() == loops.UVLOOP
    assert loops.use() == loops.UVLOOP
    loop = asyncio.new_event_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
        assert loop.run_until_complete(_running()) == loops.UVLOOP
    finally:
        loop.close()


def test_the_standard_loop_is_named_as_such() -> None:
    loop = asyncio.SelectorEventLoop()
    try:
        assert loop.run_until_complete(_running()) == loops.STANDARD
    finally:
        loop.close()


def test_the_workers_are_aiohttps_uvloop_workers() -> None:
    pool = WorkerPool(
        web.Application,
        host="127.0.0.1",
        port=0,
        workers=2,
        limits=Limits(),
        on_ready=lambda: None,
    )
    assert pool.cfg.worker_class_str == "aiohttp.GunicornUVLoopWebWorker"


async def _running() -> str:
    return loops.running()


def test_run_runs_a_coroutine_on_the_services_loop() -> None:
    assert loops.run(_running()) == loops.UVLOOP
