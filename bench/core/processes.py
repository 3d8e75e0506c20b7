"""The service under test as its own process: ``leaderboard serve`` (and, with the rank index,
``leaderboard rank-indexer``) started on the benchmark's DynamoDB Local and Redis, configured
through the environment the way an operator configures them.

Each process writes its output (the service's JSON access log included) to a file in a folder
the caller chooses, and is stopped with SIGTERM (SIGKILL after a grace period) on leaving the
``with`` block.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.core.procstat import children, cmdline
from bench.core.stack import API_KEY, CREDENTIALS, CURSOR_SECRET, REGION
from leaderboard.child_server import log_tail, reserved_port, terminate
from leaderboard.metrics import MULTIPROCESS_DIR

__all__ = [
    "READY_TIMEOUT_SECONDS",
    "ServiceProcess",
    "child_process",
    "dynamodb_local_pid",
    "leaderboard_command",
    "rank_index_rebuild",
    "rank_indexer",
    "service_env",
    "service_process",
]

READY_TIMEOUT_SECONDS = 90.0
_STOP_TIMEOUT_SECONDS = 15.0
_POLL_SECONDS = 0.1


def leaderboard_command(checkout: Path | None = None) -> list[str]:
    """The ``leaderboard`` command of this environment (the console script beside this
    interpreter, else the module); with ``checkout``, another checkout of this repository,
    the console script of that checkout's own ``.venv`` (``make install`` there)."""
    if checkout is not None:
        return [str(checkout / ".venv" / "bin" / "leaderboard")]
    script = Path(sys.executable).with_name("leaderboard")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "leaderboard.cli"]


def service_env(
    *, table: str, redis_url: str | None, checkout: Path | None = None
) -> dict[str, str]:
    """The environment of the service's processes: this one's, plus DynamoDB Local's
    credentials and region, the table, the benchmark's API key and cursor secret, JSON logs,
    and the rank index's Redis when there is one; for the command of another ``checkout``,
    without PYTHONPATH, so that it imports that checkout's modules only."""
    env = dict(os.environ)
    if checkout is not None:
        env.pop("PYTHONPATH", None)
    for name in ("AWS_ENDPOINT_URL_DYNAMODB", "LEADERBOARD_REDIS_URL", "LEADERBOARD_DATA_DIR"):
        env.pop(name, None)
    env.update(
        {
            "AWS_ACCESS_KEY_ID": CREDENTIALS[0],
            "AWS_SECRET_ACCESS_KEY": CREDENTIALS[1],
            "AWS_REGION": REGION,
            "LEADERBOARD_TABLE": table,
            "LEADERBOARD_API_KEYS": API_KEY,
            "LEADERBOARD_CURSOR_SECRET": CURSOR_SECRET.decode(),
            "LEADERBOARD_LOG_FORMAT": "json",
        }
    )
    if redis_url is not None:
        env["LEADERBOARD_REDIS_URL"] = redis_url
    return env


@dataclass(frozen=True)
class ServiceProcess:
    """A running ``leaderboard serve``: its process id (the master's, with workers), GraphQL
    URL and log file."""

    pid: int
    url: str
    """``http://127.0.0.1:<port>/graphql``."""
    health_url: str
    log_path: Path
    workers: int = 1

    @property
    def metrics_url(self) -> str:
        """``http://127.0.0.1:<port>/metrics`` (a loopback caller may scrape it)."""
        return self.health_url.removesuffix("/healthz") + "/metrics"


def _health(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return int(error.code), None
    except (OSError, ValueError):
        return 0, None


def _ready(status: int, body: Any, *, with_index: bool) -> bool:
    if status != 200 or not isinstance(body, dict):
        return False
    return not with_index or bool((body.get("rankIndex") or {}).get("inSync"))


@contextmanager
def child_process(
    command: list[str],
    env: Mapping[str, str],
    log_path: Path,
    *,
    cwd: Path | None = None,
    stop_timeout: float = _STOP_TIMEOUT_SECONDS,
) -> Iterator[Any]:
    """``command`` run with ``env`` (in ``cwd``, by default this process's folder), its output
    appended to ``log_path``; terminated on leaving (killed after ``stop_timeout``
    seconds)."""
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command,
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        terminate(process, stop_timeout)


@contextmanager
def service_process(
    endpoint_url: str,
    *,
    table: str,
    redis_url: str | None,
    log_dir: Path,
    environment: Mapping[str, str] | None = None,
    workers: int = 1,
    launcher: Sequence[str] | None = None,
    checkout: Path | None = None,
) -> Iterator[ServiceProcess]:
    """Run ``leaderboard serve`` with ``workers`` worker processes on a loopback port of its own
    against ``table`` (which must exist) at ``endpoint_url``, with ``environment`` added to
    :func:`service_env`'s (limits, say: ``LEADERBOARD_LIMIT_<NAME>``); yield once ``/healthz``
    answers 200 (and, with ``redis_url``, the rank index is in sync) from every worker. With
    several workers, their metrics are pooled in a fresh folder under ``log_dir``, so that a
    scrape of ``/metrics`` reports them all. ``launcher``: the command that runs the
    ``leaderboard`` command line (by default :func:`leaderboard_command`), e.g. one that runs it
    under a profiler. ``checkout``: another checkout of this repository, whose own code is run
    instead: its ``leaderboard`` (unless ``launcher`` says otherwise), in its folder, without
    PYTHONPATH."""
    with reserved_port("127.0.0.1") as port:  # the service's from here on: nobody else's
        log_path = log_dir / "service.log"
        command = [
            *(launcher if launcher is not None else leaderboard_command(checkout)),
            "serve",
            "--endpoint-url",
            endpoint_url,
            "--table",
            table,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            # One process unless asked, whatever the machine's cores.
            "--workers",
            str(workers),
        ]
        env = service_env(table=table, redis_url=redis_url, checkout=checkout) | dict(
            environment or {}
        )
        if workers > 1:
            env[MULTIPROCESS_DIR] = tempfile.mkdtemp(prefix="metrics-", dir=log_dir)
        base = f"http://127.0.0.1:{port}"
        ready: set[Any] = set()
        with child_process(command, env, log_path, cwd=checkout) as process:
            deadline = time.monotonic() + READY_TIMEOUT_SECONDS
            while True:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"leaderboard serve exited with {process.returncode}:\n"
                        + log_tail(log_path, 0)
                    )
                status, body = _health(f"{base}/healthz")
                if _ready(status, body, with_index=redis_url is not None):
                    ready.add(body.get("pid"))
                    if len(ready) >= workers:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"leaderboard serve was not ready within {READY_TIMEOUT_SECONDS:g} s"
                        f" (last /healthz: {status} {body}):\n{log_tail(log_path, 0)}"
                    )
                time.sleep(_POLL_SECONDS)
            yield ServiceProcess(
                process.pid, f"{base}/graphql", f"{base}/healthz", log_path, workers=workers
            )


@contextmanager
def rank_indexer(
    endpoint_url: str,
    *,
    table: str,
    redis_url: str,
    log_dir: Path,
    checkout: Path | None = None,
) -> Iterator[int]:
    """Run ``leaderboard rank-indexer`` (the stream projector) on ``table``, that of
    ``checkout`` when given (as :func:`service_process` runs it); yield its pid."""
    command = [*leaderboard_command(checkout), "rank-indexer", "--endpoint-url", endpoint_url]
    env = service_env(table=table, redis_url=redis_url, checkout=checkout)
    log_path = log_dir / "rank-indexer.log"
    with child_process(command, env, log_path, cwd=checkout) as process:
        time.sleep(_POLL_SECONDS)
        if process.poll() is not None:
            raise RuntimeError(
                f"leaderboard rank-indexer exited with {process.returncode}:\n"
                f"{log_tail(log_path, 0)}"
            )
        yield int(process.pid)


def rank_index_rebuild(
    endpoint_url: str,
    *,
    table: str,
    redis_url: str,
    board: str,
    log_dir: Path,
    checkout: Path | None = None,
) -> None:
    """Run ``leaderboard rank-index rebuild --board BOARD`` on ``table`` to its end, that of
    ``checkout`` when given (as :func:`service_process` runs it); RuntimeError when it
    fails."""
    command = [
        *leaderboard_command(checkout),
        *("rank-index", "rebuild", "--board", board, "--endpoint-url", endpoint_url),
    ]
    env = service_env(table=table, redis_url=redis_url, checkout=checkout)
    log_path = log_dir / "rank-index-rebuild.log"
    with log_path.open("ab") as log:
        done = subprocess.run(
            command,
            env=env,
            cwd=checkout,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=READY_TIMEOUT_SECONDS,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(
            f"leaderboard rank-index rebuild exited with {done.returncode}:\n"
            + log_tail(log_path, 0)
        )


def dynamodb_local_pid() -> int | None:
    """The pid of the DynamoDB Local this process started (a child running the jar), if any."""
    for pid in children(os.getpid()):
        try:
            if any(arg.endswith("DynamoDBLocal.jar") for arg in cmdline(pid)):
                return pid
        except OSError:
            continue
    return None
