"""The event loop ``leaderboard serve`` runs on: uvloop's where it is installed (a dependency
of the service on Linux and macOS), the standard library's otherwise.

uvloop runs the loop, its sockets and its timers in C (over libuv): the work every request
does around the service's own code (reading and writing the client's and DynamoDB's sockets,
scheduling the tasks and callbacks of a request) costs less CPU than on the standard
library's selector loop, and the service's code runs unchanged on either. The single-process
server sets the policy before aiohttp makes its loop; each worker of ``serve --workers N``
sets it after it is forked (aiohttp's uvloop worker for gunicorn).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import ModuleType
from typing import Any, TypeVar

__all__ = ["STANDARD", "UVLOOP", "WORKER_CLASSES", "available", "run", "running", "use"]

T = TypeVar("T")

UVLOOP = "uvloop"
STANDARD = "asyncio"

WORKER_CLASSES = {
    UVLOOP: "aiohttp.GunicornUVLoopWebWorker",
    STANDARD: "aiohttp.GunicornWebWorker",
}
"""gunicorn's worker class of each loop: aiohttp's worker, with or without uvloop's policy."""


def _uvloop() -> ModuleType | None:
    """uvloop, where it is installed."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop


def available() -> str:
    """The loop the service runs on here: :data:`UVLOOP` when uvloop is installed, else
    :data:`STANDARD`."""
    return UVLOOP if _uvloop() is not None else STANDARD


def use() -> str:
    """Make the loops this process creates from now on :func:`available`'s; its name."""
    uvloop = _uvloop()
    if uvloop is not None:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return available()


def running() -> str:
    """The name of the loop running this coroutine's task: :data:`UVLOOP` or :data:`STANDARD`."""
    return UVLOOP if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else STANDARD


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on a new loop of :func:`available`'s kind (as ``asyncio.run``
    does, on the loop ``leaderboard serve`` runs on): for a process that serves the
    application itself, a benchmark's say."""
    uvloop = _uvloop()
    with asyncio.Runner(loop_factory=None if uvloop is None else uvloop.new_event_loop) as runner:
        return runner.run(main)
