"""The real `leaderboard` command, run as a subprocess the way a newcomer runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from leaderboard.config import default_cache_dir
from tests.cli_process import serving

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "leaderboard.cli"]
TOP = (
    '{ leaderboard(id: "global") { entryCount topScores(first: 5) { edges { node { score '
    "player { name } } } } } }"
)

SCAN = """
import sys, boto3
client = boto3.client("dynamodb", endpoint_url=sys.argv[2], region_name="eu-west-1")
for page in client.get_paginator("scan").paginate(TableName=sys.argv[1]):
    for item in page["Items"]:
        print(item)
"""
"""Prints every item of a table (argv: table, endpoint)."""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["LEADERBOARD_CACHE_DIR"] = str(default_cache_dir())
    env.update(extra)
    return env


def _get(url: str, accept: str = "application/json") -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _graphql(base: str, query: str, key: str | None = None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        f"{base}/graphql", data=json.dumps({"query": query}).encode(), headers=headers
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body: dict[str, Any] = json.loads(response.read())
    assert "errors" not in body, body
    return body["data"]  # type: ignore[no-any-return]


@contextmanager
def _serving(*args: str, cwd: Path) -> Iterator[tuple[str, Path]]:
    """Run `leaderboard serve` until healthy; yields its base URL and its output file."""
    with serving([*CLI, "serve", *args], cwd, _env(), within=120) as served:
        yield served


def test_serve_embedded_with_demo_data_graphiql_and_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with _serving("--data-dir", str(data_dir), "--demo-players", "25", cwd=tmp_path) as (
        base,
        output,
    ):
        status, health = _get(f"{base}/healthz")
        assert status == 200
        assert json.loads(health)["status"] == "ok"
        # With redis-server installed, the embedded stack runs the rank index and its
        # projector; it catches up with the stream within moments.
        deadline = time.monotonic() + 30
        while not json.loads(_get(f"{base}/healthz")[1])["rankIndex"]["inSync"]:
            assert time.monotonic() < deadline, _get(f"{base}/healthz")[1]
            time.sleep(0.2)

        status, page = _get(f"{base}/graphql", accept="text/html")
        assert status == 200
        assert "/graphiql/assets/graphiql.min.js" in page
        assert "unpkg.com" not in page
        assert "jsdelivr" not in page
        status, script = _get(f"{base}/graphiql/assets/graphiql.min.js", accept="*/*")
        assert status == 200
        assert len(script) > 100_000

        top = _graphql(base, TOP)["leaderboard"]
        assert top["entryCount"] == 25
        scores = [e["node"]["score"] for e in top["topScores"]["edges"]]
        assert len(scores) == 5
        assert scores == sorted(scores, reverse=True)
        assert all(e["node"]["player"]["name"] for e in top["topScores"]["edges"])
        # The development server made an API key and printed it for the newcomer.
        key = re.search(r"API key:\s+(\S+)", output.read_text())
        assert key is not None, output.read_text()
        _graphql(
            base,
            'mutation { submitScore(input: {playerId: "player-0001", leaderboardId: "global", '
            'gameId: "arena", score: 9999999}) { improved } }',
            key=key.group(1),
        )
    assert f"GraphiQL:  {base}/graphql" in output.read_text()
    assert output.read_text().count('"msg": "event loop: uvloop"') == 1, output.read_text()
    assert output.read_text().count('"msg": "heap settled: ') == 1, output.read_text()
    assert "Ranks:     rank index at redis://127.0.0.1:" in output.read_text()

    # A restart on the same data folder keeps everything and loads no second set of demo data.
    with _serving("--data-dir", str(data_dir), cwd=tmp_path) as (base, _):
        top = _graphql(base, TOP)["leaderboard"]
        assert top["entryCount"] == 25
        assert top["topScores"]["edges"][0]["node"]["score"] == 9999999


def test_create_table_and_seed_against_a_configured_endpoint(
    dynamodb_endpoint: str, tmp_path: Path
) -> None:
    env = _env(
        AWS_ENDPOINT_URL_DYNAMODB=dynamodb_endpoint,
        AWS_ACCESS_KEY_ID="local",
        AWS_SECRET_ACCESS_KEY="local",
        AWS_REGION="eu-west-1",
        LEADERBOARD_TABLE="cli-seeded",
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    first, again = run("create-table"), run("create-table")
    assert first.returncode == 0, first.stderr
    assert "created" in first.stdout
    assert "already exists" in again.stdout
    seeded = run("seed", "--players", "12")
    assert seeded.returncode == 0, seeded.stderr
    assert "players=12" in seeded.stdout
    assert "seeding plays" in seeded.stderr  # the progress bar
    assert not (tmp_path / ".data").exists()  # a configured endpoint starts no DynamoDB

    erased = run("erase-player", "player-0003")
    assert erased.returncode == 0, erased.stderr
    assert "erasing player-0003" in erased.stderr  # the progress bar
    assert "erased player-0003:" in erased.stdout
    scan = subprocess.run(
        [sys.executable, "-c", SCAN, "cli-seeded", dynamodb_endpoint],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scan.returncode == 0, scan.stderr
    assert "player-0002" in scan.stdout
    assert "player-0003" not in scan.stdout
    again = run("erase-player", "player-0003")
    assert again.returncode == 1
    assert "PLAYER_NOT_FOUND" in again.stderr


def test_export_schema_prints_the_committed_schema() -> None:
    result = subprocess.run(
        [*CLI, "export-schema"], capture_output=True, text=True, timeout=60, env=_env()
    )
    assert result.returncode == 0
    assert result.stdout == (ROOT / "schema.graphql").read_text()
