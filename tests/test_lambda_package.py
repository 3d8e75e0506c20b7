"""The rank-index projector's Lambda package: built, unpacked into an empty folder and run
by a bare interpreter (no site-packages) on a real stream batch from DynamoDB Local, against
a real Redis; and the handler's answer when Redis fails."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from dynamo import ranks
from dynamo.leaderboards import LeaderboardItem, get_leaderboard
from dynamo.scores import SCORE, ScoreItem
from leaderboard.child_server import reserved_port
from rankindex import lambda_handler
from rankindex.index import RankIndex
from tests.conftest import Indexed
from tests.scan import scan_items

ROOT = Path(__file__).resolve().parent.parent
SCORES = {"p0": 50, "p1": 20, "p2": 40, "p3": 20}
RANKS = {"p0": 1, "p2": 2, "p1": 3, "p3": 3}  # standard competition ranking: ties share

RUN_HANDLER = """
import json, os, sys
task, runtime = sys.argv[1], sys.argv[2]
sys.path[:0] = [task, runtime]
from rankindex import lambda_handler
import boto3, pydantic, redis
print(json.dumps({
    "result": lambda_handler.handler(json.load(sys.stdin), None),
    "paths": [p for p in sys.path if "site-packages" in p],
    "from": {m.__name__: m.__file__ for m in (lambda_handler, pydantic, redis, boto3)},
}))
"""
"""Runs the handler on the event read from stdin the way Lambda's Python runtime does:
the function's code in one folder (/var/task) and the runtime's boto3 in another."""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make lambda-package``'s zip, built into a folder of the test's own."""
    output = tmp_path_factory.mktemp("dist") / "rankindex-lambda.zip"
    built = subprocess.run(
        [sys.executable, "-m", "shipping.lambda_package", "--output", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    return output


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What Lambda's Python runtime brings: boto3 and botocore (at the pinned versions)."""
    folder = tmp_path_factory.mktemp("runtime")
    installed = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--quiet", "--no-compile"),
            *("--target", str(folder), "--constraint", str(ROOT / "constraints.txt"), "boto3"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    return folder


@pytest.mark.slow
def test_the_package_holds_the_handler_its_modules_and_dependencies_only(package: Path) -> None:
    with zipfile.ZipFile(package) as archive:
        names = archive.namelist()
    tops = {name.split("/")[0] for name in names}
    assert {"rankindex", "dynamo", "redis", "pydantic", "pydantic_core", "aiohttp"} <= tops
    assert not tops & {
        "boto3",
        "botocore",
        "gql",
        "edge",
        "resolvers",
        "leaderboard",
        "tests",
        "bin",
    }
    assert {"rankindex/lambda_handler.py", "rankindex/apply.lua", "rankindex/ranks.lua"} <= set(
        names
    )
    # Only the project's modules the handler imports: not the projector, nor the service's
    # moderation or erasure code.
    assert "rankindex/projector.py" not in names
    assert "dynamo/erasure.py" not in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


@pytest.mark.slow
async def test_the_unpacked_package_applies_a_stream_batch_to_redis(
    package: Path, runtime: Path, indexed: Indexed, redis_url: str, tmp_path: Path
) -> None:
    task = tmp_path / "task"
    task.mkdir()
    with zipfile.ZipFile(package) as archive:
        archive.extractall(task)
    api = indexed.api
    for player in SCORES:
        await api.create_player(player)
    await api.create_board("b")
    for player, score in SCORES.items():
        await api.submit(player, "b", score)
    records = await indexed.all_records()
    namespace = f"{indexed.index.namespace}-lambda"

    ran = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-S", "-I", "-c", RUN_HANDLER, str(task), str(runtime)],
        input=json.dumps({"Records": records}, default=_lambda_json),
        env={"LEADERBOARD_REDIS_URL": redis_url, "LEADERBOARD_TABLE": namespace},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["result"] == {"batchItemFailures": []}
    assert answer["paths"] == []
    assert answer["from"]["rankindex.lambda_handler"] == str(task / "rankindex/lambda_handler.py")
    assert answer["from"]["pydantic"].startswith(f"{task}/")
    assert answer["from"]["redis"].startswith(f"{task}/")
    assert answer["from"]["boto3"].startswith(f"{runtime}/")

    board = await _board(indexed)
    entries = [
        ScoreItem.model_validate(item)
        for item in await scan_items(api.db)
        if SCORE.holds(item) and item["leaderboardId"] == "b"
    ]
    better = await RankIndex(indexed.index.redis, namespace).better_counts(board, entries)
    assert better is not None, "the index should answer once the handler applied the batch"
    found = {entry.player_id: better[ranks._value(board, entry)] + 1 for entry in entries}
    assert found == RANKS


async def test_a_batch_redis_refuses_is_reported_from_its_first_record(
    indexed: Indexed, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = indexed.api
    await api.create_player("p0")
    await api.create_board("b")
    await api.submit("p0", "b", 7)
    records = await indexed.all_records()
    assert len(records) >= 3
    namespace = f"{indexed.index.namespace}-refused"
    monkeypatch.setenv("LEADERBOARD_TABLE", namespace)
    with reserved_port("127.0.0.1") as closed_port:  # nothing listens there, and nothing else can
        monkeypatch.setenv("LEADERBOARD_REDIS_URL", f"redis://127.0.0.1:{closed_port}/0")
        answer = await lambda_handler.handle_batch({"Records": records})

    first = records[0]["dynamodb"]["SequenceNumber"]
    assert answer == {"batchItemFailures": [{"itemIdentifier": first}]}
    # Delivered again to a Redis that answers, the same batch is applied whole.
    monkeypatch.setenv("LEADERBOARD_REDIS_URL", redis_url)
    assert await lambda_handler.handle_batch({"Records": records}) == {"batchItemFailures": []}
    index = RankIndex(indexed.index.redis, namespace)
    assert (await index.verify(api.db, "b")).entries == 1
    assert (await index.verify(api.db, "b")).ok


async def test_a_batch_redis_does_not_answer_is_reported_within_the_timeout(
    indexed: Indexed, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = indexed.api
    await api.create_board("b")
    records = await indexed.all_records()
    monkeypatch.setattr(lambda_handler, "COMMAND_TIMEOUT", 0.5)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        monkeypatch.setenv("LEADERBOARD_REDIS_URL", f"redis://127.0.0.1:{silent.getsockname()[1]}")
        answer = await asyncio.wait_for(lambda_handler.handle_batch({"Records": records}), 60)
    first = records[0]["dynamodb"]["SequenceNumber"]
    assert answer == {"batchItemFailures": [{"itemIdentifier": first}]}


async def test_the_handler_refuses_to_run_without_its_redis_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LEADERBOARD_REDIS_URL", raising=False)
    with pytest.raises(lambda_handler.SettingsError, match="LEADERBOARD_REDIS_URL"):
        await lambda_handler.handle_batch({"Records": []})


async def _board(indexed: Indexed) -> LeaderboardItem:
    board = await get_leaderboard(indexed.api.db, "b")
    assert board is not None
    return board


def _lambda_json(value: object) -> object:
    """Values of a stream record as Lambda's JSON event carries them."""
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} in a stream record")
