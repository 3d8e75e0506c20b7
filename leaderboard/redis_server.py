"""Debian's ``redis-server``, run as a child process configured on its command line.

:class:`EmbeddedRedis` starts the server on a loopback port, waits until it answers ``PING``,
and stops it again on :meth:`EmbeddedRedis.stop`, on leaving a ``with`` block, or at
interpreter exit, so no Redis process outlives the program that started it. No configuration
file is read or written: every setting is an argument of the command line.

Without ``data_dir`` the server keeps everything in memory and writes nothing to disk but its
log. With ``data_dir`` it keeps an RDB snapshot there (``save 60 1``: at most a minute after a
change, and always on a clean :meth:`~EmbeddedRedis.stop`) and loads it at the next start.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType

from leaderboard.child_processes import (
    PortTakenError,
    log_tail,
    spawn_logged,
    start_on_port,
    terminate,
    wait_started,
)

__all__ = [
    "FALLBACK_BINARIES",
    "EmbeddedRedis",
    "RedisServerError",
    "redis_server_binary",
]

FALLBACK_BINARIES: tuple[str, ...] = ("/usr/sbin/redis-server", "/usr/bin/redis-server")
"""Where Debian's package puts ``redis-server``, tried when it is not on ``PATH``."""

_HOST = "127.0.0.1"
_LOG_NAME = "redis-server.log"
_SNAPSHOT_NAME = "dump.rdb"
_POLL_INTERVAL_SECONDS = 0.05
_PROBE_TIMEOUT_SECONDS = 2.0
_STOP_TIMEOUT_SECONDS = 30.0
_REDIS_MISSING = (
    "redis-server was not found on PATH, nor at "
    + " or ".join(FALLBACK_BINARIES)
    + ". Install Debian's package (`apt-get install redis-server`, or `make redis`)."
)


class RedisServerError(RuntimeError):
    """redis-server could not be found, started or reached."""


def redis_server_binary() -> str | None:
    """The path of the ``redis-server`` executable: the one on ``PATH`` if any, else the
    first executable of :data:`FALLBACK_BINARIES`; ``None`` when there is none."""
    found = shutil.which("redis-server")
    if found is not None:
        return found
    for candidate in FALLBACK_BINARIES:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class EmbeddedRedis:
    """One redis-server run as a child process, listening on 127.0.0.1 only.

    ``port=None`` picks a free port at every start. The server's log goes to
    :attr:`log_path`, in ``log_dir`` when given, else in ``data_dir`` when given, else in a
    temporary folder that :meth:`stop` removes; it never reaches the terminal.
    """

    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        log_dir: Path | None = None,
        port: int | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        self.data_dir = data_dir.absolute() if data_dir is not None else None
        self.log_dir = log_dir.absolute() if log_dir is not None else None
        self.port = port
        self.startup_timeout = startup_timeout
        self._active_port: int | None = port
        self._process: subprocess.Popen[bytes] | None = None
        self._temp_dir: Path | None = None

    @property
    def url(self) -> str:
        """The URL of database 0, such as ``redis://127.0.0.1:6379/0``, for Redis clients."""
        if self._active_port is None:
            raise RedisServerError("redis-server has no port yet; call start() first.")
        return f"redis://{_HOST}:{self._active_port}/0"

    @property
    def log_path(self) -> Path:
        """The file that receives the server's log and any output it writes."""
        folder = self.log_dir or self.data_dir or self._temp_dir
        if folder is None:
            raise RedisServerError("redis-server has no log folder yet; call start() first.")
        return folder / _LOG_NAME

    @property
    def running(self) -> bool:
        """Whether the child process has been started and is still alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start the server and return once it answers ``PING``; no-op if running.

        Raises :class:`RedisServerError` if ``redis-server`` is missing, if the port is taken,
        or if the server exits or stays silent for ``startup_timeout`` seconds (which includes
        loading a snapshot from ``data_dir``).
        """
        if self.running:
            return
        self.stop()
        binary = redis_server_binary()
        if binary is None:
            raise RedisServerError(_REDIS_MISSING)
        try:
            if self.data_dir is not None:
                self.data_dir.mkdir(parents=True, exist_ok=True)
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
            elif self.data_dir is None:
                self._temp_dir = Path(tempfile.mkdtemp(prefix="redis-server-"))
        except OSError as exc:
            raise RedisServerError(f"cannot prepare redis-server's folders: {exc}") from exc

        try:
            start_on_port(
                _HOST,
                self.port,
                lambda port: self._launch(binary, port),
                name="redis-server",
                error=RedisServerError,
            )
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server: SIGTERM (with ``data_dir``, it writes its snapshot first), wait up
        to 30 s, then kill; remove the temporary log folder. Safe to call repeatedly."""
        process = self._process
        self._process = None
        atexit.unregister(self.stop)
        if process is not None:
            terminate(process, _STOP_TIMEOUT_SECONDS)
        temp_dir = self._temp_dir
        self._temp_dir = None
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        port = self._active_port if self._active_port is not None else "auto"
        state = "running" if self.running else "stopped"
        return f"EmbeddedRedis(port={port}, {state})"

    def _command(self, binary: str, port: int) -> list[str]:
        """The command line that runs the server on ``port``."""
        command = [
            binary,
            "--port",
            str(port),
            "--bind",
            _HOST,
            "--protected-mode",
            "yes",
            "--daemonize",
            "no",
            "--appendonly",
            "no",
            "--logfile",
            str(self.log_path),
        ]
        if self.data_dir is None:
            command += ["--save", ""]
        else:
            command += ["--dir", str(self.data_dir), "--dbfilename", _SNAPSHOT_NAME]
            command += ["--save", "60", "1"]
        return command

    def _launch(self, binary: str, port: int) -> None:
        command = self._command(binary, port)
        log_path = self.log_path
        try:
            process, log_start = spawn_logged(command, log_path, "redis-server", port)
        except OSError as exc:
            raise RedisServerError(f"could not run {binary}: {exc}") from exc
        self._process = process
        self._active_port = port
        atexit.register(self.stop)

        started = wait_started(
            process, lambda: _answers_ping(port), self.startup_timeout, _POLL_INTERVAL_SECONDS
        )
        if started == "ready":
            return
        tail = log_tail(log_path, log_start)
        self._process = None
        if started == "exited":
            if port != self.port and "Address already in use" in tail:
                raise PortTakenError(port)
            raise RedisServerError(
                f"redis-server exited with code {process.returncode} during start-up. "
                f"Last lines of {self._log_name()}:\n{tail}"
            )
        terminate(process, _STOP_TIMEOUT_SECONDS)
        raise RedisServerError(
            f"redis-server did not answer PING on {self.url} within "
            f"{self.startup_timeout:g} s; it was stopped. Raise startup_timeout on a "
            f"slow machine or for a large snapshot. Last lines of {self._log_name()}:\n"
            f"{tail}"
        )

    def _log_name(self) -> str:
        if self._temp_dir is not None:
            return "its log (in a temporary folder, removed on stop)"
        return str(self.log_path)


def _answers_ping(port: int) -> bool:
    """Whether the server on ``port`` answers ``PING`` with ``+PONG``; it answers ``-LOADING``
    while it still reads its snapshot, which does not count."""
    try:
        with socket.create_connection((_HOST, port), timeout=_PROBE_TIMEOUT_SECONDS) as sock:
            sock.sendall(b"PING\r\n")
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(256)
                if not chunk:
                    return False
                reply += chunk
    except OSError:
        return False
    return reply == b"+PONG\r\n"
