"""What the embedded servers (DynamoDB Local, Redis) share: ports, logs, stopping."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "PortTakenError",
    "free_port",
    "log_tail",
    "port_is_free",
    "spawn_logged",
    "start_on_port",
    "terminate",
    "wait_started",
]

_BIND_FAILURE_ATTEMPTS = 3
_TAIL_LINES = 30
_LOG_ROTATE_BYTES = 5 << 20


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def free_port(host: str) -> int:
    """A port on ``host`` that nothing listens on right now."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


class PortTakenError(Exception):
    """The picked port was taken by another process before the server could bind it."""


def start_on_port(
    host: str,
    port: int | None,
    launch: Callable[[int], None],
    *,
    name: str,
    error: Callable[[str], Exception],
) -> None:
    """Run ``launch`` on ``port``, refused with ``error`` while something listens there; with
    None, on a free port, picked again (up to 3 attempts) when another process takes it first
    (``launch`` raises PortTakenError)."""
    attempts = 1 if port is not None else _BIND_FAILURE_ATTEMPTS
    for attempt in range(1, attempts + 1):
        if port is None:
            chosen = free_port(host)
        elif port_is_free(host, port):
            chosen = port
        else:
            raise error(
                f"port {port} is already in use; stop whatever listens there or "
                "pass port=None to pick a free port."
            )
        try:
            launch(chosen)
            return
        except PortTakenError:
            if attempt == attempts:
                raise error(
                    f"port {chosen} was taken by another process while {name} started; retry."
                ) from None


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


def spawn_logged(
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


def wait_started(
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
