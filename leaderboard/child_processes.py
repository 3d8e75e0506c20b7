"""What the embedded servers (DynamoDB Local, Redis) share: ports, logs, stopping."""

from __future__ import annotations

import socket
import subprocess
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["free_port", "log_tail", "port_is_free", "terminate"]

_TAIL_LINES = 30


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


def terminate(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Stop a child: SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
