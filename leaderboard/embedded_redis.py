"""Debian's ``redis-server``, run as a child process configured on its command line
(:class:`~leaderboard.child_server.ChildServer`).

No configuration file is read or written: every setting is an argument of the command line.
Without ``data_dir`` the server keeps everything in memory and writes nothing to disk but its
log. With ``data_dir`` it keeps an RDB snapshot there (``save 60 1``: at most a minute after a
change, and always on a clean :meth:`~EmbeddedRedis.stop`) and loads it at the next start.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import ClassVar

from leaderboard.child_server import ChildServer, ChildServerError

__all__ = [
    "FALLBACK_BINARIES",
    "EmbeddedRedis",
    "EmbeddedRedisError",
    "redis_server_binary",
]

FALLBACK_BINARIES: tuple[str, ...] = ("/usr/sbin/redis-server", "/usr/bin/redis-server")
"""Where Debian's package puts ``redis-server``, tried when it is not on ``PATH``."""

_HOST = "127.0.0.1"
_LOG_NAME = "redis-server.log"
_SNAPSHOT_NAME = "dump.rdb"
_PROBE_TIMEOUT_SECONDS = 2.0
_REDIS_MISSING = (
    "redis-server was not found on PATH, nor at "
    + " or ".join(FALLBACK_BINARIES)
    + ". Install Debian's package (`apt-get install redis-server`, or `make redis`)."
)


class EmbeddedRedisError(ChildServerError):
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


class EmbeddedRedis(ChildServer):
    """One redis-server run as a child process, listening on 127.0.0.1 only.

    Its log is in ``log_dir`` when given, else in ``data_dir`` when given, else in a
    temporary folder that :meth:`stop` removes.
    """

    name: ClassVar[str] = "redis-server"
    error: ClassVar[type[ChildServerError]] = EmbeddedRedisError
    stop_timeout: ClassVar[float] = 30.0
    """SIGTERM makes it write its snapshot first (with ``data_dir``)."""
    poll_interval: ClassVar[float] = 0.05
    probe: ClassVar[str] = " PING"
    timeout_hint: ClassVar[str] = "Raise startup_timeout on a slow machine or for a large snapshot."

    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        log_dir: Path | None = None,
        port: int | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        super().__init__(host=_HOST, port=port, startup_timeout=startup_timeout)
        self.data_dir = data_dir.absolute() if data_dir is not None else None
        self.log_dir = log_dir.absolute() if log_dir is not None else None
        self._binary = ""
        self._temp_dir: Path | None = None

    @property
    def url(self) -> str:
        """The URL of database 0, such as ``redis://127.0.0.1:6379/0``, for Redis clients."""
        return f"redis://{_HOST}:{self.active_port}/0"

    @property
    def address(self) -> str:
        return self.url

    @property
    def log_path(self) -> Path:
        folder = self.log_dir or self.data_dir or self._temp_dir
        if folder is None:
            raise EmbeddedRedisError("redis-server has no log folder yet; call start() first.")
        return folder / _LOG_NAME

    def _prepare(self) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise EmbeddedRedisError(_REDIS_MISSING)
        self._binary = binary
        try:
            if self.data_dir is not None:
                self.data_dir.mkdir(parents=True, exist_ok=True)
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
            elif self.data_dir is None:
                self._temp_dir = Path(tempfile.mkdtemp(prefix="redis-server-"))
        except OSError as exc:
            raise EmbeddedRedisError(f"cannot prepare redis-server's folders: {exc}") from exc

    def _command(self, port: int) -> list[str]:
        command = [
            self._binary,
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
            return [*command, "--save", ""]
        return [
            *command,
            *("--dir", str(self.data_dir), "--dbfilename", _SNAPSHOT_NAME),
            *("--save", "60", "1"),
        ]

    def _answers(self, port: int) -> bool:
        """Whether the server answers ``PING`` with ``+PONG``; it answers ``-LOADING`` while it
        still reads its snapshot, which does not count."""
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
        return reply.startswith(b"+PONG")

    def _cleanup(self) -> None:
        temp_dir = self._temp_dir
        self._temp_dir = None
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)

    def _log_name(self) -> str:
        if self._temp_dir is not None:
            return "its log (in a temporary folder, removed on stop)"
        return str(self.log_path)
