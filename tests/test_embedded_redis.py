"""The real redis-server child process (leaderboard.embedded_redis) and its failures."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis.asyncio

from leaderboard import embedded_redis
from leaderboard.child_server import reserved_port
from leaderboard.embedded_redis import EmbeddedRedis, EmbeddedRedisError, redis_server_binary

__all__: list[str] = []

REPO_ROOT = Path(__file__).resolve().parents[1]


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def fake_redis_server(folder: Path, script: str) -> Path:
    """A folder holding a ``redis-server`` that is the given shell script."""
    binary = folder / "redis-server"
    folder.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    binary.chmod(0o755)
    return folder


def put_first_on_path(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")


async def test_server_answers_redis_py_and_stops() -> None:
    server = EmbeddedRedis()
    await asyncio.to_thread(server.start)
    try:
        assert server.running
        assert server.url.startswith("redis://127.0.0.1:")
        assert server.url.endswith("/0")
        port = port_of(server.url)
        assert accepts_connections(port)
        log_path = server.log_path
        log = log_path.read_text(encoding="utf-8")
        assert (
            f"--port {port} --bind 127.0.0.1 --protected-mode yes --daemonize no"
            f' --appendonly no --logfile {log_path} --save ""'
        ) in log
        assert "Ready to accept connections" in log

        async with redis.asyncio.Redis.from_url(server.url) as client:
            assert await client.ping() is True
            added = await client.zadd(
                "board", {"0000000000001#p0000001": 30.0, "0000000000002#p0000002": 10.0}
            )
            assert added == 2
            assert await client.zadd("board", {"0000000000003#p0000003": 20.0}) == 1
            assert await client.zcount("board", "(10", "+inf") == 2
            assert await client.zcount("board", "-inf", "+inf") == 3
            assert await client.zrevrank("board", "0000000000002#p0000002") == 2
            assert await client.config_get("save") == {"save": ""}
    finally:
        server.stop()

    assert not server.running
    assert not accepts_connections(port)
    assert not log_path.parent.exists()  # the temporary log folder is removed
    server.stop()  # idempotent


def test_context_manager_and_explicit_port(tmp_path: Path) -> None:
    with reserved_port("127.0.0.1") as port:
        server = EmbeddedRedis(port=port, log_dir=tmp_path / "logs")
        assert server.url == f"redis://127.0.0.1:{port}/0"  # known before start
        with server:
            assert server.running
            assert accepts_connections(port)
        assert not server.running
        assert not accepts_connections(port)
    assert "Ready to accept connections" in (tmp_path / "logs" / "redis-server.log").read_text()


async def test_data_dir_keeps_data_across_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "nested" / "redis"
    server = EmbeddedRedis(data_dir=data_dir)
    await asyncio.to_thread(server.start)
    try:
        async with redis.asyncio.Redis.from_url(server.url) as client:
            await client.zadd("board", {"m": 7.0})
            assert await client.config_get("save") == {"save": "60 1"}
    finally:
        server.stop()
    assert (data_dir / "dump.rdb").is_file()  # written on the clean shutdown
    assert (data_dir / "redis-server.log").is_file()

    await asyncio.to_thread(server.start)  # the same object starts again
    try:
        async with redis.asyncio.Redis.from_url(server.url) as client:
            assert await client.zscore("board", "m") == 7.0
    finally:
        server.stop()


async def test_in_memory_data_does_not_survive_restart() -> None:
    server = EmbeddedRedis()
    await asyncio.to_thread(server.start)
    try:
        async with redis.asyncio.Redis.from_url(server.url) as client:
            await client.set("k", "v")
    finally:
        server.stop()

    await asyncio.to_thread(server.start)
    try:
        async with redis.asyncio.Redis.from_url(server.url) as client:
            assert await client.dbsize() == 0
    finally:
        server.stop()


def test_url_before_start_needs_a_port() -> None:
    with pytest.raises(EmbeddedRedisError, match="call start"):
        _ = EmbeddedRedis().url


def test_explicit_port_in_use_is_reported() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        server = EmbeddedRedis(port=port)

        with pytest.raises(EmbeddedRedisError, match=f"port {port} is already in use"):
            server.start()
        assert not server.running


def test_missing_binary_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(embedded_redis, "FALLBACK_BINARIES", ())
    assert redis_server_binary() is None

    server = EmbeddedRedis()
    with pytest.raises(EmbeddedRedisError, match=r"apt-get install redis-server"):
        server.start()
    assert not server.running


def test_binary_on_path_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = fake_redis_server(tmp_path / "bin", "exit 0\n")
    monkeypatch.setenv("PATH", str(folder))
    assert redis_server_binary() == str(folder / "redis-server")


def test_fallback_location_is_used_off_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = fake_redis_server(tmp_path / "sbin", "exit 0\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(
        embedded_redis, "FALLBACK_BINARIES", (str(tmp_path / "none"), str(folder / "redis-server"))
    )
    assert redis_server_binary() == str(folder / "redis-server")


def test_early_exit_reports_the_log_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put_first_on_path(
        monkeypatch,
        fake_redis_server(tmp_path / "bin", 'echo "fake redis cannot start: $*"\nexit 3\n'),
    )
    server = EmbeddedRedis(data_dir=tmp_path / "data")

    with pytest.raises(EmbeddedRedisError, match="exited with code 3") as info:
        server.start()

    assert "fake redis cannot start: --port " in str(info.value)
    assert str(tmp_path / "data" / "redis-server.log") in str(info.value)
    assert not server.running
    assert "fake redis cannot start" in (tmp_path / "data" / "redis-server.log").read_text()


def test_silent_server_times_out_and_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "redis.pid"
    put_first_on_path(
        monkeypatch,
        fake_redis_server(
            tmp_path / "bin", f'echo $$ > "{pid_file}"\necho "still loading"\nexec sleep 60\n'
        ),
    )
    server = EmbeddedRedis(startup_timeout=1.0)

    started = time.monotonic()
    with pytest.raises(EmbeddedRedisError, match=r"did not answer PING .* within 1 s") as info:
        server.start()

    assert time.monotonic() - started < 15
    assert "still loading" in str(info.value)
    assert not server.running
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_server_left_running_is_stopped_at_interpreter_exit() -> None:
    program = (
        "from leaderboard.embedded_redis import EmbeddedRedis\n"
        "server = EmbeddedRedis()\n"
        "server.start()\n"
        "print(server.url)\n"
        "print(server.log_path.parent)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert result.stderr == ""  # the server's output went to its log, not to the terminal
    url, log_dir = result.stdout.splitlines()
    assert url.startswith("redis://127.0.0.1:")
    assert not accepts_connections(port_of(url))
    assert not Path(log_dir).exists()
