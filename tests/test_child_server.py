"""The lifecycle every embedded server shares, on a small real server: a Python HTTP server
run as a child process."""

from __future__ import annotations

import errno
import socket
import sys
import urllib.request
from pathlib import Path
from typing import ClassVar

import pytest

from leaderboard.child_server import ChildServer, ChildServerError, reserved_port


class HttpError(ChildServerError):
    pass


# Serves HTTP on the port given; with a countdown file, first says the port is taken and
# exits, as many times as the file says.
SERVER = """
import http.server, pathlib, sys
port, countdown = int(sys.argv[1]), pathlib.Path(sys.argv[2])
left = int(countdown.read_text()) if countdown.exists() else 0
if left:
    countdown.write_text(str(left - 1))
    print("bind: Address", "already in use", flush=True)
    sys.exit(1)
if len(sys.argv) > 3:
    print(sys.argv[3], flush=True)
    sys.exit(3)
http.server.HTTPServer(("127.0.0.1", port), http.server.SimpleHTTPRequestHandler).serve_forever()
"""


class HttpServer(ChildServer):
    name: ClassVar[str] = "http-server"
    error: ClassVar[type[ChildServerError]] = HttpError
    poll_interval: ClassVar[float] = 0.05

    def __init__(
        self, folder: Path, *, port: int | None = None, fail: str = "", timeout: float = 20.0
    ) -> None:
        super().__init__(host="127.0.0.1", port=port, startup_timeout=timeout)
        self.folder = folder
        self.fail = fail
        self.prepared = 0

    @property
    def log_path(self) -> Path:
        return self.folder / "http.log"

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.active_port}/"

    def _prepare(self) -> None:
        self.prepared += 1
        self.folder.mkdir(parents=True, exist_ok=True)

    def _command(self, port: int) -> list[str]:
        command = [sys.executable, "-c", SERVER, str(port), str(self.folder / "countdown")]
        return [*command, self.fail] if self.fail else command

    def _answers(self, port: int) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False


def test_it_starts_on_a_free_port_answers_logs_and_stops(tmp_path: Path) -> None:
    with HttpServer(tmp_path) as server:
        assert server.running
        with urllib.request.urlopen(server.address, timeout=5) as response:
            assert response.status == 200
        port = server.active_port
        assert f"--- http-server on port {port}: " in server.log_path.read_text()
        assert "running" in repr(server)
    assert not server.running
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    server.stop()  # again: nothing to do


def test_a_picked_port_taken_first_is_picked_again_up_to_three_times(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "countdown").write_text("2")
    with HttpServer(tmp_path) as server:
        assert server.running
    assert server.log_path.read_text().count("Address already in use") == 2
    (tmp_path / "countdown").write_text("3")
    with pytest.raises(HttpError, match=r"port \d+ was taken by another process while http"):
        HttpServer(tmp_path).start()


def test_a_fixed_port_in_use_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        server = HttpServer(tmp_path, port=port)
        with pytest.raises(HttpError, match=f"port {port} is already in use"):
            server.start()
        assert not server.log_path.exists()
    with server:
        assert server.active_port == port


def test_a_reserved_port_is_kept_from_everyone_but_its_server(tmp_path: Path) -> None:
    with reserved_port("127.0.0.1") as port:
        with socket.socket() as other, pytest.raises(OSError, match="in use"):
            other.bind(("127.0.0.1", port))
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) == errno.ECONNREFUSED
        with (
            HttpServer(tmp_path, port=port) as server,
            urllib.request.urlopen(server.address, timeout=30) as response,
        ):
            assert response.status == 200
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) == errno.ECONNREFUSED


def test_an_exit_at_start_up_reports_the_log_tail(tmp_path: Path) -> None:
    server = HttpServer(tmp_path, fail="no licence for this port")
    with pytest.raises(HttpError, match="exited with code 3 during start-up") as info:
        server.start()
    assert "no licence for this port" in str(info.value)
    assert not server.running


def test_a_server_that_never_answers_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    class Silent(HttpServer):
        def _answers(self, port: int) -> bool:
            return False

    server = Silent(tmp_path, timeout=1.0)
    with pytest.raises(HttpError, match=r"did not answer on http://127.0.0.1:\d+/ within 1 s"):
        server.start()
    assert not server.running
    with pytest.raises(HttpError, match="call start"):
        _ = HttpServer(tmp_path / "other").address
