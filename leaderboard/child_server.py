"""One lifecycle for the servers the service runs as child processes (DynamoDB Local, Redis).

A :class:`ChildServer` starts its process on a loopback port (a free one, picked again if
another process takes it first, or a given one, refused while something listens there),
appends the process's output to its log file, waits until the server answers its readiness
probe, and stops it again on :meth:`~ChildServer.stop`, on leaving a ``with`` block, or at
interpreter exit, so no child outlives the program that started it. A subclass says only
what differs: how to find and prepare its program, its command line, and its probe.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, Self

if TYPE_CHECKING:
    from types import TracebackType

__all__ = [
    "ChildServer",
    "ChildServerError",
    "free_port",
    "log_tail",
    "port_is_free",
    "reserved_port",
    "terminate",
]

_BIND_FAILURE_ATTEMPTS = 3
_TAIL_LINES = 30
_LOG_ROTATE_BYTES = 5 << 20


class ChildServerError(RuntimeError):
    """A child server could not be found, started or reached."""


class _PortTaken(Exception):
    """The picked port was taken by another process before the server could bind it."""


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def free_port(host: str) -> int:
    """A port on ``host`` that nothing listens on right now."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def reserved_port(host: str) -> Iterator[int]:
    """A port on ``host`` held for the block, for a server started on it there: a socket bound
    to it (with SO_REUSEADDR) that never listens keeps every other process off it (no bind,
    no choice of it as a free or an outgoing port), while the server, which binds with
    SO_REUSEADDR too (as DynamoDB Local, redis-server, aiohttp and gunicorn do), can listen
    there. Connections to it are refused while nothing listens. :func:`free_port` leaves a
    port free until the server binds it, and another process may take it meanwhile."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind((host, 0))
        port: int = holder.getsockname()[1]
        yield port


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


class ChildServer(ABC):
    """A server run as a child process, listening on ``host``.

    ``port=None`` picks a free port at every start. Its output goes to :attr:`log_path`,
    never to the terminal.
    """

    name: ClassVar[str]
    """What messages call the server."""
    error: ClassVar[type[ChildServerError]] = ChildServerError
    """What the server's failures raise."""
    stop_timeout: ClassVar[float] = 10.0
    """Seconds a stopping server has after SIGTERM before it is killed."""
    poll_interval: ClassVar[float] = 0.1
    """Seconds between readiness probes while it starts."""
    timeout_hint: ClassVar[str] = "Raise startup_timeout on a slow machine."
    probe: ClassVar[str] = ""
    """What its readiness probe asks (" PING"), for messages."""
    run_hint: ClassVar[str] = ""
    """What to do when its program cannot be run, for messages."""

    def __init__(self, *, host: str, port: int | None, startup_timeout: float) -> None:
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self._active_port: int | None = port
        self._process: subprocess.Popen[bytes] | None = None

    # What a subclass says.

    @abstractmethod
    def _prepare(self) -> None:
        """Find the program and create the folders it needs; raise :attr:`error` if either
        fails. Called before every start."""

    @abstractmethod
    def _command(self, port: int) -> list[str]:
        """The command line that runs the server on ``port``."""

    @abstractmethod
    def _answers(self, port: int) -> bool:
        """Whether the server on ``port`` is ready."""

    @property
    @abstractmethod
    def log_path(self) -> Path:
        """The file that receives the process's output."""

    @property
    @abstractmethod
    def address(self) -> str:
        """Where clients reach it (an endpoint URL, a Redis URL)."""

    def _cleanup(self) -> None:  # noqa: B027 - most servers leave nothing behind
        """Remove what a start prepared and a stop no longer needs."""

    def _log_name(self) -> str:
        return str(self.log_path)

    # The lifecycle.

    @property
    def running(self) -> bool:
        """Whether the child process has been started and is still alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def active_port(self) -> int:
        if self._active_port is None:
            raise self.error(f"{self.name} has no port yet; call start() first.")
        return self._active_port

    def start(self) -> None:
        """Start the server and return once it is ready; no-op if it runs. Raises
        :attr:`error` if its program is missing, its port taken, or if it exits or stays
        unready for ``startup_timeout`` seconds."""
        if self.running:
            return
        self.stop()
        try:
            self._prepare()
            self._start_on_port()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server: SIGTERM, wait up to :attr:`stop_timeout`, then SIGKILL. Safe to
        call repeatedly."""
        process = self._process
        self._process = None
        atexit.unregister(self.stop)
        if process is not None:
            terminate(process, self.stop_timeout)
        self._cleanup()

    def __enter__(self) -> Self:
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
        return f"{type(self).__name__}(host={self.host!r}, port={port}, {state})"

    def _start_on_port(self) -> None:
        """Launch on the given port, refused while something listens there; or on a free
        port, picked again (up to 3 attempts) when another process takes it first."""
        attempts = 1 if self.port is not None else _BIND_FAILURE_ATTEMPTS
        for attempt in range(1, attempts + 1):
            if self.port is None:
                chosen = free_port(self.host)
            elif port_is_free(self.host, self.port):
                chosen = self.port
            else:
                raise self.error(
                    f"port {self.port} is already in use; stop whatever listens there or "
                    "pass port=None to pick a free port."
                )
            try:
                self._launch(chosen)
                return
            except _PortTaken:
                if attempt == attempts:
                    raise self.error(
                        f"port {chosen} was taken by another process while {self.name} "
                        "started; retry."
                    ) from None

    def _launch(self, port: int) -> None:
        command = self._command(port)
        log_path = self.log_path
        try:
            process, log_start = _spawn_logged(command, log_path, self.name, port)
        except OSError as exc:
            hint = f". {self.run_hint}" if self.run_hint else ""
            raise self.error(f"could not run {command[0]}: {exc}{hint}") from exc
        self._process = process
        self._active_port = port
        atexit.register(self.stop)

        started = _wait_started(
            process, lambda: self._answers(port), self.startup_timeout, self.poll_interval
        )
        if started == "ready":
            return
        tail = log_tail(log_path, log_start)
        self._process = None
        terminate(process, self.stop_timeout)
        if started == "exited":
            if port != self.port and "Address already in use" in tail:
                raise _PortTaken(port)
            raise self.error(
                f"{self.name} exited with code {process.returncode} during start-up. "
                f"Last lines of {self._log_name()}:\n{tail}"
            )
        raise self.error(
            f"{self.name} did not answer{self.probe} on {self.address} within "
            f"{self.startup_timeout:g} s; it was stopped. {self.timeout_hint} "
            f"Last lines of {self._log_name()}:\n{tail}"
        )


def log_tail(log_path: Path, start: int) -> str:
    """The last lines a server wrote to its log since byte ``start``, for error messages."""
    try:
        with log_path.open("rb") as log:
            log.seek(start)
            lines = deque(log, maxlen=_TAIL_LINES)
    except OSError as exc:
        return f"(log unreadable: {exc})"
    text = b"".join(lines).decode("utf-8", errors="replace").rstrip()
    return text or "(no output)"


def _spawn_logged(
    command: list[str], log_path: Path, name: str, port: int
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``command`` with its output appended to ``log_path`` (emptied first once past
    5 MiB), after a line naming the server, its port and the command. Returns the process and
    the log's offset where this run's lines start; OSError when the command cannot run."""
    with log_path.open("ab") as log:
        if log.tell() > _LOG_ROTATE_BYTES:
            log.truncate(0)
        start = log.seek(0, os.SEEK_END)
        shown = " ".join(arg if arg else '""' for arg in command)
        log.write(f"--- {name} on port {port}: {shown}\n".encode())
        log.flush()
        process = subprocess.Popen(
            command,
            cwd=log_path.parent,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return process, start


def _wait_started(
    process: subprocess.Popen[bytes], answers: Callable[[], bool], timeout: float, poll: float
) -> Literal["ready", "exited", "timeout"]:
    """Poll a starting server every ``poll`` seconds until it answers (and still runs), exits,
    or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            return "exited"
        if answers() and process.poll() is None:
            return "ready"
        if time.monotonic() >= deadline:
            return "timeout"
        time.sleep(poll)


def terminate(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Stop a child: SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
