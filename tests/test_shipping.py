"""The service as it ships: a wheel built from the sources, installed (not editable) into a
fresh virtual environment that cannot see this repository, serving GraphQL, GraphiQL from
the packaged files and ranks from the rank index's Lua scripts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from leaderboard.config import Settings, default_cache_dir
from leaderboard.graphiql import ASSET_FILES, ASSET_PREFIX, ensure_graphiql_assets
from tests.cli_process import running, serving

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dynamo", "resolvers", "gql", "edge", "leaderboard", "rankindex")
SOURCE_FILES = ("pyproject.toml", "README.md", "constraints.txt")
KEY = "shipping-test-key"
INSTALL_TIMEOUT = 600.0


@dataclass(frozen=True)
class Venv:
    """A fresh virtual environment with the wheel installed, and a folder to run it in."""

    bin: Path
    home: Path

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a program installed in it: none of this repository's Python
        settings or AWS variables, no virtualenv of the test run."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AWS_", "LEADERBOARD_", "PYTHON", "VIRTUAL_ENV"))
        }
        env.update(
            HOME=str(self.home),
            AWS_ACCESS_KEY_ID="local",
            AWS_SECRET_ACCESS_KEY="local",
            AWS_REGION="us-east-1",
            LEADERBOARD_CACHE_DIR=str(self.home / "cache"),
            LEADERBOARD_LOG_FORMAT="text",
        )
        env.update(extra)
        return env


def _run(
    command: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        list(command),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the sources after the GraphiQL build step."""
    build = tmp_path_factory.mktemp("build")
    source = build / "src"
    ignore = shutil.ignore_patterns("__pycache__", "graphiql_assets")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    for name in SOURCE_FILES:
        (source / name).write_bytes((ROOT / name).read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    step = [sys.executable, "-m", "leaderboard.graphiql_bundle", "--cache-dir"]
    _run([*step, str(default_cache_dir())], cwd=source, env=env)
    _run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(build), "."],
        cwd=source,
        env=env,
        timeout=INSTALL_TIMEOUT,
    )
    (found,) = build.glob("*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A virtual environment of its own (no system site-packages) with the wheel and its
    declared dependencies installed from the package index, pinned by constraints.txt."""
    home = tmp_path_factory.mktemp("installed")
    installed = Venv(home / "venv" / "bin", home)
    _run([sys.executable, "-m", "venv", str(home / "venv")], cwd=home, env=installed.env())
    pip = [str(installed.bin / "python"), "-m", "pip", "install", "--quiet", "--no-compile"]
    _run(
        [*pip, "--constraint", str(ROOT / "constraints.txt"), str(wheel)],
        cwd=home,
        env=installed.env(),
        timeout=INSTALL_TIMEOUT,
    )
    return installed


def test_the_wheel_holds_the_lua_scripts_and_the_graphiql_files(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        packaged = {
            name: archive.read(f"leaderboard/graphiql_assets/{name}") for name in ASSET_FILES
        }
    assert {n for n in names if n.endswith(".lua")} == {
        f"rankindex/{p.name}" for p in (ROOT / "rankindex").glob("*.lua")
    }
    assert "leaderboard/graphiql_assets/manifest.json" in names
    pinned = ensure_graphiql_assets(default_cache_dir())
    for name, content in packaged.items():
        assert content == (pinned / name).read_bytes(), name
    unshipped = ("tests/", "bench/", "soak/", "shipping/", "faultproxy/")
    assert not {n for n in names if n.startswith(unshipped)}


def test_the_installed_wheel_serves_graphql_graphiql_and_indexed_ranks(
    venv: Venv, settings: Settings, redis_url: str
) -> None:
    endpoint = settings.endpoint_url
    assert endpoint is not None
    table = settings.table
    env = venv.env(LEADERBOARD_REDIS_URL=redis_url, LEADERBOARD_API_KEYS=KEY)
    where = _run([str(venv.bin / "python"), "-c", LOCATE], cwd=venv.home, env=env)
    assert json.loads(where.stdout) == [str(venv.bin.parent)] * 2, where.stdout
    leaderboard = str(venv.bin / "leaderboard")
    backend = ["--endpoint-url", endpoint, "--table", table]
    created = _run([leaderboard, "create-table", *backend], cwd=venv.home, env=env)
    assert f"table {table} created" in created.stdout

    with (
        running([leaderboard, "rank-indexer", *backend], venv.home, env, "rank-indexer"),
        serving([leaderboard, "serve", *backend, "--workers", "1"], venv.home, env, within=90) as (
            base,
            _,
        ),
    ):
        pinned = ensure_graphiql_assets(default_cache_dir())
        status, page = _get(f"{base}/graphql", accept="text/html")
        assert status == 200
        for name in ASSET_FILES:
            assert f"{ASSET_PREFIX}/{name}" in page.decode()
            status, body = _get(f"{base}{ASSET_PREFIX}/{name}", accept="*/*")
            assert (status, body) == (200, (pinned / name).read_bytes()), name

        for player in ("p0", "p1", "p2"):
            _graphql(
                base,
                CREATE_PLAYER,
                {"i": {"id": player, "name": player, "email": f"{player}@x.example"}},
            )
        _graphql(base, CREATE_BOARD, {"i": {"id": "b", "name": "b", "period": "GLOBAL"}})
        for player, score in (("p0", 10), ("p1", 30), ("p2", 20)):
            submitted = _graphql(
                base,
                SUBMIT,
                {"i": {"playerId": player, "leaderboardId": "b", "gameId": "g", "score": score}},
            )
            assert submitted["submitScore"]["errors"] == []

        # The projector applies the stream through apply.lua; the index then equals the table.
        verify = [leaderboard, "rank-index", "verify", "--board", "b", *backend]
        deadline = time.monotonic() + 60
        while True:
            checked = subprocess.run(
                verify, cwd=venv.home, env=env, capture_output=True, text=True, timeout=60
            )
            if checked.returncode == 0 and "b: 3 entries" in checked.stdout:
                break
            assert time.monotonic() < deadline, checked.stdout + checked.stderr
            time.sleep(0.5)
        assert "index equals table" in checked.stdout
        deadline = time.monotonic() + 30
        while not json.loads(_get(f"{base}/healthz")[1])["rankIndex"]["inSync"]:
            assert time.monotonic() < deadline, _get(f"{base}/healthz")[1]
            time.sleep(0.2)
        # Ranks read through ranks.lua while the index is in step.
        ranks = _graphql(base, RANKS, {})
        assert [ranks[p]["rank"] for p in ("p0", "p1", "p2")] == [
            {"rank": 3, "total": 3},
            {"rank": 1, "total": 3},
            {"rank": 2, "total": 3},
        ]
    # Everything GraphiQL needed came with the wheel: nothing was fetched into the cache.
    assert not (venv.home / "cache").exists()


LOCATE = """
import json, leaderboard, rankindex
from pathlib import Path
print(json.dumps([str(Path(m.__file__).parents[4]) for m in (leaderboard, rankindex)]))
"""
"""Prints the virtual environment each package was imported from (venv/lib/pythonX/...)."""

CREATE_PLAYER = """mutation($i: CreatePlayerInput!) {
  createPlayer(input: $i) { errors { code } } }"""
CREATE_BOARD = """mutation($i: CreateLeaderboardInput!) {
  createLeaderboard(input: $i) { errors { code } } }"""
SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) { errors { code } } }"""
RANKS = """{
  p0: player(id: "p0") { rank(leaderboardId: "b") { rank total } }
  p1: player(id: "p1") { rank(leaderboardId: "b") { rank total } }
  p2: player(id: "p2") { rank(leaderboardId: "b") { rank total } }
}"""


def _get(url: str, accept: str = "application/json") -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _graphql(base: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{base}/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body: dict[str, Any] = json.loads(response.read())
    assert "errors" not in body, body
    for payload in body["data"].values():
        assert not (payload or {}).get("errors"), body
    return body["data"]  # type: ignore[no-any-return]
