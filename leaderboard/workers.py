"""Several worker processes serving one port: gunicorn's master process with aiohttp's own
worker class (``aiohttp.GunicornUVLoopWebWorker``, or ``aiohttp.GunicornWebWorker`` where
uvloop is not installed: leaderboard/loops.py).

The master binds the port, starts the workers, replaces one that dies and, on SIGTERM, stops
listening and gives every worker the drain bound to finish: each worker stops accepting,
closes its WebSockets with 1001, lets its requests in flight finish within
``Limits.shutdown_timeout`` and exits. Whatever the command set up before the master started
(the embedded DynamoDB Local and Redis, the table, the keys) is made once, in the master, and
each worker inherits the final settings when it is forked.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

from aiohttp import web
from gunicorn import glogging
from gunicorn.app.base import BaseApplication

from leaderboard import loops
from leaderboard.app import server_options
from leaderboard.config import Limits
from leaderboard.drain import SOCKET_CLOSE_WAIT
from leaderboard.metrics import process_exited

__all__ = ["CLEANUP_MARGIN", "WorkerPool", "default_workers"]

CLEANUP_MARGIN = 5.0
"""Seconds a worker has, beyond its drain bound, to notice the signal and close its clients
(DynamoDB, Redis) before the master kills it."""

log = logging.getLogger("leaderboard")


def default_workers(*, embedded: bool) -> int:
    """One worker per core this process may run on; one with the embedded backends."""
    if embedded:
        return 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def bind_address(host: str, port: int) -> str:
    """gunicorn's form of an address: an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _ServiceLogger(glogging.Logger):  # type: ignore[misc]
    """gunicorn's own messages (workers booting, exiting, being replaced) through the
    service's logging, in its format; gunicorn's access log stays off (the service writes its
    own)."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        self.error_log.handlers.clear()
        self.error_log.propagate = True


class WorkerPool(BaseApplication):  # type: ignore[misc]
    """``workers`` processes serving the application that ``build`` makes (one for each
    worker, after it is forked) on ``host``:``port``; ``on_ready`` runs in the master once
    the port is bound."""

    def __init__(
        self,
        build: Callable[[], web.Application],
        *,
        host: str,
        port: int,
        workers: int,
        limits: Limits,
        on_ready: Callable[[], None],
    ) -> None:
        self._build = build
        self._limits = limits
        self._options: dict[str, object] = {
            "bind": [bind_address(host, port)],
            "workers": workers,
            # uvloop's policy where it is installed, set in each worker after the fork.
            "worker_class": loops.WORKER_CLASSES[loops.available()],
            "graceful_timeout": math.ceil(
                limits.shutdown_timeout + SOCKET_CLOSE_WAIT + CLEANUP_MARGIN
            ),
            "logger_class": _ServiceLogger,
            "accesslog": None,
            "control_socket_disable": True,
            "proc_name": "leaderboard",
            "when_ready": lambda _arbiter: on_ready(),
            # A worker that ended leaves the live sums of the pooled metrics.
            "child_exit": lambda _arbiter, worker: process_exited(worker.pid),
        }
        super().__init__()

    def load_config(self) -> None:
        for name, value in self._options.items():
            self.cfg.set(name, value)

    def load(self) -> Callable[[], Awaitable[web.AppRunner]]:
        """What aiohttp's worker calls to get its runner: the application with the
        service's server bounds, and no access log of aiohttp's own."""
        build, limits = self._build, self._limits

        async def runner() -> web.AppRunner:
            return web.AppRunner(build(), access_log=None, **server_options(limits))

        return runner

    def serve(self) -> int:
        """Run the master until it stops; its exit status."""
        master = os.getpid()
        try:
            self.run()
        except BaseException as stopped:
            code = _exit_status(stopped)
            if os.getpid() != master:
                _leave_worker(code)
            if not isinstance(stopped, SystemExit):
                raise
            return code
        return 0


def _exit_status(stopped: BaseException) -> int:
    if not isinstance(stopped, SystemExit):
        return 1
    if stopped.code is None:
        return 0
    return stopped.code if isinstance(stopped.code, int) else 1


def _leave_worker(code: int) -> NoReturn:
    """End a worker process where gunicorn returns from it: below the frames it inherited
    from the master, whose resources (the embedded backends, their files) are the master's
    to close, not the worker's."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
