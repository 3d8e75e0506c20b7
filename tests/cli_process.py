"""The `leaderboard` command run as a child process by the tests: started, waited for, and
stopped with Ctrl-C (SIGINT), after which it must exit cleanly."""

from __future__ import annotations

import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from leaderboard.child_server import reserved_port

__all__ = ["running", "serving"]

_STOP_SECONDS = 30


@contextmanager
def running(
    command: list[str], cwd: Path, env: dict[str, str], name: str
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """Run ``command`` until the block ends, with its output in ``cwd/<name>.log`` (the
    process and the file are yielded); then interrupt it: it must still be running then, and
    exit with 0."""
    output = cwd / f"{name}.log"
    with open(output, "w") as sink:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink
        )
    try:
        yield process, output
        assert process.poll() is None, output.read_text()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=_STOP_SECONDS)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 0, output.read_text()


@contextmanager
def serving(
    command: list[str], cwd: Path, env: dict[str, str], *, within: float
) -> Iterator[tuple[str, Path]]:
    """Run ``command`` (a ``leaderboard serve``) on a loopback port of its own (held for the
    block) until ``/healthz`` answers 200, at most ``within`` seconds; yields its base URL
    and its output file."""
    with (
        reserved_port("127.0.0.1") as port,
        running([*command, "--port", str(port)], cwd, env, f"serve-{port}") as (process, output),
    ):
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + within
        while not _healthy(base):
            assert process.poll() is None, output.read_text()
            assert time.monotonic() < deadline, output.read_text()
            time.sleep(0.2)
        yield base, output


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=10) as response:
            status: int = response.status
    except (urllib.error.HTTPError, OSError):
        return False
    return status == 200
