"""The soak's fleet: ``leaderboard serve --workers N`` instances as real processes on ports of
their own, each beside a ``leaderboard rank-indexer`` (the projectors share a lease in Redis:
one projects the table's stream into the rank index and the change feed at a time), all
configured through the environment the way an operator configures them.

Every process writes its output to a file in a folder the caller chooses and is stopped with
SIGTERM (SIGKILL after a grace period) on leaving the block. Each instance pools the metrics of
its workers in a folder of its own (``PROMETHEUS_MULTIPROC_DIR``), so that one scrape reports
them all.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import soak
from bench.core.processes import child_process, leaderboard_command, service_env
from bench.core.stack import ADMIN_KEY
from leaderboard.child_server import log_tail, reserved_port
from leaderboard.config import Limits

__all__ = ["Instance", "fleet", "limits_env"]

READY_TIMEOUT_SECONDS = 120.0
"""How long an instance (and each of its workers) may take to answer its first health check."""
_STOP_TIMEOUT_SECONDS = 30.0
_POLL_SECONDS = 0.2
_ROOT = Path(soak.__file__).resolve().parent.parent
"""The sources the processes run: these, whatever the environment's installation points at."""


@dataclass(frozen=True)
class Instance:
    """One running ``leaderboard serve``."""

    name: str
    base: str
    """``http://127.0.0.1:<port>``."""
    pid: int
    workers: tuple[int, ...]
    """The worker processes seen answering health checks."""

    @property
    def url(self) -> str:
        return f"{self.base}/graphql"


def limits_env(limits: Limits) -> dict[str, str]:
    """``LEADERBOARD_LIMIT_<NAME>`` for each limit that differs from the service's default."""
    default = Limits()
    return {
        f"LEADERBOARD_LIMIT_{spec.name.upper()}": str(getattr(limits, spec.name))
        for spec in fields(Limits)
        if getattr(limits, spec.name) != getattr(default, spec.name)
    }


def _env(table: str, redis_url: str, extra: Mapping[str, str]) -> dict[str, str]:
    env = service_env(table=table, redis_url=redis_url)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = f"{_ROOT}{os.pathsep}{path}" if path else str(_ROOT)
    env["LEADERBOARD_ADMIN_KEYS"] = ADMIN_KEY
    return env | dict(extra)


def _health(url: str) -> dict[str, Any] | None:
    """The body of a 200 from ``/healthz`` (on a connection of its own), else None."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            body = json.loads(response.read()) if response.status == 200 else None
    except (OSError, ValueError, urllib.error.HTTPError):
        return None
    return body if isinstance(body, dict) else None


def _wait_ready(process: Any, base: str, log_path: Path, workers: int) -> tuple[int, ...]:
    """Wait until ``workers`` distinct processes have answered ``/healthz`` with the rank
    index in sync; their pids."""
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    seen: set[int] = set()
    while len(seen) < workers:
        if process.poll() is not None:
            raise RuntimeError(
                f"leaderboard serve exited with {process.returncode}:\n{log_tail(log_path, 0)}"
            )
        body = _health(f"{base}/healthz")
        if body is not None and (body.get("rankIndex") or {}).get("inSync"):
            seen.add(int(body.get("pid", 0)))
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{len(seen)} of the {workers} workers of leaderboard serve answered within"
                f" {READY_TIMEOUT_SECONDS:g} s:\n{log_tail(log_path, 0)}"
            )
        time.sleep(_POLL_SECONDS)
    return tuple(sorted(seen))


@contextmanager
def _instance(
    name: str, endpoint_url: str, env: Mapping[str, str], folder: Path, workers: int
) -> Iterator[Instance]:
    """A rank indexer and ``leaderboard serve --workers <workers>`` on a loopback port of its
    own."""
    folder.mkdir(parents=True)
    metrics = folder / "metrics"
    metrics.mkdir()
    env = {**env, "PROMETHEUS_MULTIPROC_DIR": str(metrics)}
    indexer = [*leaderboard_command(), "rank-indexer", "--endpoint-url", endpoint_url]
    log_path = folder / "service.log"
    with (
        reserved_port("127.0.0.1") as port,  # the service's from here on: nobody else's
        child_process(
            indexer, env, folder / "rank-indexer.log", stop_timeout=_STOP_TIMEOUT_SECONDS
        ),
        child_process(
            [
                *leaderboard_command(),
                *("serve", "--endpoint-url", endpoint_url, "--host", "127.0.0.1"),
                *("--port", str(port), "--workers", str(workers)),
            ],
            env,
            log_path,
            stop_timeout=_STOP_TIMEOUT_SECONDS,
        ) as process,
    ):
        base = f"http://127.0.0.1:{port}"
        pids = _wait_ready(process, base, log_path, workers)
        yield Instance(name, base, int(process.pid), pids)


@asynccontextmanager
async def fleet(
    endpoint_url: str,
    *,
    table: str,
    redis_url: str,
    log_dir: Path,
    instances: int = 2,
    workers: int = 2,
    limits: Limits | None = None,
    environment: Mapping[str, str] | None = None,
) -> AsyncIterator[list[Instance]]:
    """Run ``instances`` instances of ``workers`` workers each on ``table`` (which must
    exist) at ``endpoint_url``, with ``redis_url`` for the rank index, the change feed and the
    response cache, ``limits`` and further ``environment`` variables (settings such as
    ``LEADERBOARD_SUBSCRIPTION_REFRESH_SECONDS``); yield them once every worker answers."""
    env = _env(table, redis_url, {**limits_env(limits or Limits()), **(environment or {})})
    stack = ExitStack()
    try:
        started = []
        for n in range(1, instances + 1):
            running = _instance(f"instance {n}", endpoint_url, env, log_dir / f"i{n}", workers)
            started.append(await asyncio.to_thread(stack.enter_context, running))
        yield started
    finally:
        await asyncio.to_thread(stack.close)
