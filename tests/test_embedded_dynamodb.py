"""The real DynamoDB Local child process (leaderboard.embedded_dynamodb) and its failures."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import aioboto3
import pytest

from leaderboard.backend import streams_endpoint
from leaderboard.child_server import reserved_port
from leaderboard.embedded_dynamodb import (
    EmbeddedDynamoDB,
    EmbeddedDynamoDBError,
    dynamodb_local_home,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from types_aiobotocore_dynamodb.client import DynamoDBClient

__all__: list[str] = []

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache_dir() -> Path:
    """The shared download cache, kept across test runs."""
    configured = os.environ.get("LEADERBOARD_CACHE_DIR")
    return Path(configured) if configured else REPO_ROOT / ".cache"


@asynccontextmanager
async def dynamodb(endpoint_url: str) -> AsyncIterator[DynamoDBClient]:
    async with aioboto3.Session().client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    ) as client:
        yield client


async def list_tables(endpoint_url: str) -> list[str]:
    async with dynamodb(endpoint_url) as client:
        response = await client.list_tables()
    return response["TableNames"]


async def create_table(endpoint_url: str, name: str) -> None:
    async with dynamodb(endpoint_url) as client:
        await client.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        await client.put_item(TableName=name, Item={"pk": {"S": "kept"}, "n": {"N": "7"}})


async def get_item(endpoint_url: str, table: str, key: str) -> dict[str, object] | None:
    async with dynamodb(endpoint_url) as client:
        response = await client.get_item(TableName=table, Key={"pk": {"S": key}})
    item = response.get("Item")
    return dict(item) if item is not None else None


def port_of(endpoint_url: str) -> int:
    return int(endpoint_url.rsplit(":", 1)[1])


def accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def fake_java_home(folder: Path, script: str) -> Path:
    """A JAVA_HOME whose ``bin/java`` is the given shell script."""
    java = folder / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    java.chmod(0o755)
    return folder


def test_home_holds_the_jar_and_native_libraries(cache_dir: Path) -> None:
    home = dynamodb_local_home(cache_dir)

    assert home.name == "dynamodb_local_2026-01-16"
    assert (home / "DynamoDBLocal.jar").stat().st_size > 1_000_000
    assert any((home / "DynamoDBLocal_lib").glob("libsqlite4java-linux-*.so"))


def test_its_log_is_in_the_log_dir_else_the_data_dir_else_the_cache(
    cache_dir: Path, tmp_path: Path
) -> None:
    logs, data = tmp_path / "logs", tmp_path / "data"
    name = "dynamodb-local.log"
    assert EmbeddedDynamoDB(cache_dir, data_dir=data, log_dir=logs).log_path == logs / name
    assert EmbeddedDynamoDB(cache_dir, data_dir=data).log_path == data / name
    assert EmbeddedDynamoDB(cache_dir).log_path == cache_dir.absolute() / name


async def test_in_memory_server_answers_aioboto3_and_stops(cache_dir: Path, tmp_path: Path) -> None:
    # Its log in this test's folder: the download cache may be shared with other runs.
    server = EmbeddedDynamoDB(cache_dir, log_dir=tmp_path)
    await asyncio.to_thread(server.start)
    try:
        assert server.running
        assert server.endpoint_url.startswith("http://127.0.0.1:")
        port = port_of(server.endpoint_url)
        assert accepts_connections(port)

        assert await list_tables(server.endpoint_url) == []
        await create_table(server.endpoint_url, "scores")
        assert await list_tables(server.endpoint_url) == ["scores"]
        assert await get_item(server.endpoint_url, "scores", "kept") == {
            "pk": {"S": "kept"},
            "n": {"N": "7"},
        }
    finally:
        server.stop()

    assert not server.running
    assert not accepts_connections(port)
    log = server.log_path.read_text(encoding="utf-8")
    assert f"-port {port} -sharedDb -disableTelemetry -inMemory" in log
    assert "InMemory:\ttrue" in log
    server.stop()  # idempotent


@pytest.mark.slow
async def test_tables_survive_restart_on_the_same_data_dir(cache_dir: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "nested" / "data"
    server = EmbeddedDynamoDB(cache_dir, data_dir=data_dir)
    await asyncio.to_thread(server.start)
    try:
        await create_table(server.endpoint_url, "durable")
    finally:
        server.stop()
    assert (data_dir / "shared-local-instance.db").is_file()
    assert (data_dir / "dynamodb-local.log").is_file()

    second = EmbeddedDynamoDB(cache_dir, data_dir=data_dir)
    await asyncio.to_thread(second.start)
    try:
        assert await list_tables(second.endpoint_url) == ["durable"]
        assert await get_item(second.endpoint_url, "durable", "kept") == {
            "pk": {"S": "kept"},
            "n": {"N": "7"},
        }
    finally:
        second.stop()


@pytest.mark.slow
async def test_in_memory_tables_do_not_survive_restart(cache_dir: Path) -> None:
    server = EmbeddedDynamoDB(cache_dir)
    await asyncio.to_thread(server.start)
    try:
        await create_table(server.endpoint_url, "ephemeral")
    finally:
        server.stop()

    await asyncio.to_thread(server.start)  # the same object starts again
    try:
        assert await list_tables(server.endpoint_url) == []
    finally:
        server.stop()


def test_context_manager_starts_and_stops(cache_dir: Path) -> None:
    with EmbeddedDynamoDB(cache_dir, startup_timeout=60) as server:
        port = port_of(server.endpoint_url)
        assert server.running
        assert accepts_connections(port)
    assert not server.running
    assert not accepts_connections(port)


def test_explicit_port_is_used(cache_dir: Path) -> None:
    with reserved_port("127.0.0.1") as port:
        server = EmbeddedDynamoDB(cache_dir, port=port)
        assert server.endpoint_url == f"http://127.0.0.1:{port}"  # known before start
        with server:
            assert accepts_connections(port)
        assert not accepts_connections(port)


def test_endpoint_url_before_start_needs_a_port(cache_dir: Path) -> None:
    with pytest.raises(EmbeddedDynamoDBError, match="call start"):
        _ = EmbeddedDynamoDB(cache_dir).endpoint_url


def test_explicit_port_in_use_is_reported(cache_dir: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        server = EmbeddedDynamoDB(cache_dir, port=port)

        with pytest.raises(EmbeddedDynamoDBError, match=f"port {port} is already in use"):
            server.start()
        assert not server.running


def test_missing_java_says_how_to_install_it(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))

    with pytest.raises(EmbeddedDynamoDBError, match=r"apt-get install openjdk-17-jre-headless"):
        EmbeddedDynamoDB(cache_dir).start()


def test_early_exit_reports_the_log_tail(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    java_home = fake_java_home(tmp_path / "jdk", 'echo "fake java cannot start: $*"\nexit 3\n')
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    server = EmbeddedDynamoDB(cache_dir, data_dir=tmp_path / "data")

    with pytest.raises(EmbeddedDynamoDBError, match="exited with code 3") as info:
        server.start()

    assert "fake java cannot start: -Djava.library.path=" in str(info.value)
    assert not server.running
    assert "fake java cannot start" in (tmp_path / "data" / "dynamodb-local.log").read_text()


def test_silent_server_times_out_and_is_stopped(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "java.pid"
    java_home = fake_java_home(
        tmp_path / "jdk", f'echo $$ > "{pid_file}"\necho "still warming up"\nexec sleep 60\n'
    )
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    server = EmbeddedDynamoDB(cache_dir, data_dir=tmp_path / "data", startup_timeout=1.0)

    started = time.monotonic()
    with pytest.raises(EmbeddedDynamoDBError, match=r"did not answer .* within 1 s") as info:
        server.start()

    assert time.monotonic() - started < 15
    assert "still warming up" in str(info.value)
    assert not server.running
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_server_left_running_is_stopped_at_interpreter_exit(cache_dir: Path) -> None:
    program = (
        "import pathlib, sys\n"
        "from leaderboard.embedded_dynamodb import EmbeddedDynamoDB\n"
        "server = EmbeddedDynamoDB(pathlib.Path(sys.argv[1]))\n"
        "server.start()\n"
        "print(server.endpoint_url)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program, str(cache_dir)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    assert result.stderr == ""  # Java's output went to the log, not to the terminal
    assert result.stdout.startswith("http://127.0.0.1:")
    assert result.stdout.count("\n") == 1
    assert not accepts_connections(port_of(result.stdout.strip()))


@pytest.mark.parametrize(
    ("dynamodb", "streams"),
    [
        (None, None),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://localstack:4566", "http://localstack:4566"),
        ("https://dynamodb.eu-west-1.amazonaws.com", None),
        ("https://dynamodb-fips.us-east-1.amazonaws.com", None),
        ("https://dynamodb.cn-north-1.amazonaws.com.cn", None),
        ("https://dynamodb.us-east-1.api.aws", None),
    ],
)
def test_the_stream_is_read_where_the_table_is_or_at_aws_own_streams_address(
    dynamodb: str | None, streams: str | None
) -> None:
    """DynamoDB Local answers the Streams API at the table's address; AWS at its own, which
    the SDK resolves when given no endpoint."""
    assert streams_endpoint(dynamodb) == streams
