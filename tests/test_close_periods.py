"""``leaderboard close-periods`` run as a child process against the tests' DynamoDB Local: its
output, its refusals, and closes killed (SIGKILL) at seeded random moments and run again until
one finishes, whose final standings must be an independent model's, one Result item per
entrant."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import random
import re
import select
import subprocess
import sys
import time
import uuid
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from dynamo.closing import RESULT_PAGE, CloseProgress, Phase
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.items import now
from dynamo.leaderboards import BoardStatus, LeaderboardItem, read_board
from dynamo.results import RESULT, board_results
from dynamo.scores import PARTITIONED_SCORE, SCORE
from leaderboard.close_commands import CloseBar
from leaderboard.config import Settings, default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from tests.boards import write_board
from tests.conftest import Table, plain_client
from tests.scan import scan_items

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dynamodb_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A DynamoDB Local of this module's own. Its closes write tens of thousands of items,
    run after run; a DynamoDB Local that the session's earlier tests have filled (their tables
    come and go, their stream records stay) takes many times as long to write them, which
    would make a close's time depend on the tests that ran before it."""
    logs = tmp_path_factory.mktemp("dynamodb-local-close-periods")
    with EmbeddedDynamoDB(default_cache_dir(), log_dir=logs) as local:
        yield local.endpoint_url


@pytest.fixture(scope="module")
def tables(dynamodb_endpoint: str) -> Iterator[Any]:
    """The plain client that drops each test's table, on this module's DynamoDB Local."""
    with plain_client(dynamodb_endpoint) as client:
        yield client


CLI = [sys.executable, "-m", "leaderboard.cli", "close-periods"]
FRAME = re.compile(
    r"(?P<board>\S+): (?P<step>freezing counts|freezing entries|writing results)"
    r"(?: \[[#.]*\])? (?P<done>\d+)/(?P<total>\d+|\?) \((?P<percent>\d+|\?)%\)"
)
"""One drawing of a board's progress (with its bar on a terminal)."""
RUN_SECONDS = 300.0
"""The longest one run of the command may take before the test fails (a hang)."""


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LEADERBOARD_"))}
    env.update(
        LEADERBOARD_CACHE_DIR=str(default_cache_dir()),
        AWS_ENDPOINT_URL_DYNAMODB=str(settings.endpoint_url),
        AWS_ACCESS_KEY_ID="local",
        AWS_SECRET_ACCESS_KEY="local",
        AWS_REGION=settings.region,
        LEADERBOARD_TABLE=settings.table,
        LEADERBOARD_LOG_FORMAT="text",
    )
    env.update(extra)
    return env


def _model(scores: list[int]) -> dict[str, tuple[int, int, int, int]]:
    """Per player of a DESC board (player p<i> scored ``scores[i]`` at T0 + i s): its position
    in the board's order (better score first, then the earlier attainment), its rank (1 + the
    entrants with a strictly better score), the total, its score."""
    ordered = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    ascending = sorted(scores)
    total = len(scores)
    return {
        f"p{i:03d}": (position, 1 + total - bisect_right(ascending, scores[i]), total, scores[i])
        for position, i in enumerate(ordered, start=1)
    }


@dataclass(frozen=True)
class After:
    """Kill the command this many seconds after starting it."""

    seconds: float


@dataclass(frozen=True)
class AtStep:
    """Kill the command once its progress shows ``step`` at ``done`` or further."""

    step: str
    done: int


Trigger = After | AtStep


@dataclass
class Run:
    status: int | None
    """The exit status; None when the test killed it."""
    stdout: str
    stderr: str
    frames: list[dict[str, str]] = field(default_factory=list)


def _frames(text: str) -> list[dict[str, str]]:
    found = []
    for part in re.split(r"[\r\n]+", text):
        match = FRAME.search(part)
        if match:
            found.append(match.groupdict())
    return found


def _met(trigger: Trigger | None, frames: list[dict[str, str]]) -> bool:
    if not isinstance(trigger, AtStep):
        return False
    return any(f["step"] == trigger.step and int(f["done"]) >= trigger.done for f in frames)


def _run_on_terminal(
    args: list[str], env: dict[str, str], cwd: Path, kill: Trigger | None = None
) -> Run:
    """Run the command with its stderr on a pseudo-terminal (its progress drawn in place), and
    SIGKILL it when ``kill`` says."""
    master, slave = pty.openpty()
    out = cwd / f"stdout-{uuid.uuid4().hex[:8]}.txt"
    with open(out, "w") as sink:
        process = subprocess.Popen(
            [*CLI, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=slave
        )
    os.close(slave)
    started = time.monotonic()
    raw = b""
    killed = False

    def stop() -> None:
        nonlocal killed
        if process.poll() is None:
            process.kill()
            killed = True

    try:
        while True:
            elapsed = time.monotonic() - started
            assert elapsed < RUN_SECONDS, raw.decode(errors="replace")
            if isinstance(kill, After) and elapsed >= kill.seconds:
                stop()
            ready, _, _ = select.select([master], [], [], 0.01)
            if not ready:
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # EIO: the command and every copy of the terminal are gone
                chunk = b""
            if not chunk:
                break
            raw += chunk
            if not killed and _met(kill, _frames(raw.decode(errors="replace"))):
                stop()
        process.wait(timeout=RUN_SECONDS)
    finally:
        os.close(master)
        if process.poll() is None:  # the test failed: leave nothing running
            process.kill()
            process.wait()
    text = raw.decode(errors="replace")
    return Run(None if killed else process.returncode, out.read_text(), text, _frames(text))


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_SECONDS
    )


async def _board(table: Table, board_id: str) -> LeaderboardItem:
    board = await read_board(table.db, board_id, consistent=True, count=False)
    assert board is not None
    return board


def _where(board: LeaderboardItem) -> tuple[str, int]:
    """How far the board's close went: its step (``OPEN`` before it began) and, in the
    RESULTS step, the entrants its cursor is past."""
    if board.closed_at is not None:
        return Phase.FINAL.value, 0
    if board.closing_since is None:
        return "OPEN", 0
    phase = str(board.close_phase)
    position = json.loads(board.close_cursor)["position"] if board.close_cursor else 0
    return phase, int(position)


def _next_kill(rng: random.Random, board: LeaderboardItem, entrants: int, kills: int) -> Trigger:
    """A moment to kill the next run at, ahead of where the close stands (so that the run is
    still under way then): first a random time, then a random point of freezing the entries
    (while that step has not begun), then random points of writing the results."""
    phase, position = _where(board)
    if kills == 0:
        return After(rng.uniform(0.3, 4.0))
    if phase in ("OPEN", Phase.COUNTS.value):
        return AtStep("freezing entries", rng.randint(1, entrants - RESULT_PAGE))
    start = position if phase == Phase.RESULTS.value else 0
    last_page = (entrants - 1) // RESULT_PAGE * RESULT_PAGE
    return AtStep("writing results", rng.randint(min(start + 1, last_page), last_page))


async def _kill_and_rerun(
    table: Table, settings: Settings, tmp_path: Path, *, entrants: int, partitions: int, seed: int
) -> None:
    rng = random.Random(seed)
    scores = [rng.randrange(0, entrants // 40) for _ in range(entrants)]  # ~40 per score
    board_id = f"season-{partitions}"
    ended = now() - timedelta(hours=1)
    await write_board(
        table.db, board_id, scores, partitions=partitions, players=False, ends_at=ended
    )
    env = _env(settings)
    landed: list[tuple[Trigger, str]] = []
    last_page = (entrants - 1) // RESULT_PAGE * RESULT_PAGE
    for kills in range(5):
        board = await _board(table, board_id)
        phase, position = _where(board)
        if phase == Phase.RESULTS.value and position >= last_page:
            break  # the last page is under way: no moment ahead is sure to come
        trigger = _next_kill(rng, board, entrants, kills)
        run = await asyncio.to_thread(_run_on_terminal, [], env, tmp_path, trigger)
        assert run.status is None, (trigger, run.status, run.stderr)  # killed, not finished
        landed.append((trigger, _where(await _board(table, board_id))[0]))
    # Each kill at a step's progress cut that step off; the close was not over after any.
    steps = {"freezing entries": Phase.ENTRIES.value, "writing results": Phase.RESULTS.value}
    assert all(
        phase == steps[trigger.step] for trigger, phase in landed if isinstance(trigger, AtStep)
    ), landed
    assert any(phase == Phase.RESULTS.value for _, phase in landed), landed
    assert all(phase != Phase.FINAL.value for _, phase in landed), landed

    final = await asyncio.to_thread(_run_on_terminal, [], env, tmp_path)
    assert final.status == 0, final.stderr
    assert final.stdout == f"closed {board_id}: {entrants} entrants\n"
    assert "\r" in final.stderr  # the bar redrawn in place
    assert final.frames[-1] == {
        "board": board_id,
        "step": "writing results",
        "done": str(entrants),
        "total": str(entrants),
        "percent": "100",
    }

    # Exactly one Result item per entrant, each the model's.
    model = _model(scores)
    items = [i for i in await scan_items(table.db) if i.get("leaderboardId") == board_id]
    results = [i for i in items if RESULT.holds(i)]
    assert len(results) == entrants
    assert Counter(str(i["playerId"]) for i in results) == Counter(iter(model))
    found = {
        str(i["playerId"]): (int(i["position"]), int(i["rank"]), int(i["total"]), int(i["score"]))
        for i in results
    }
    assert found == model
    listed: list[int] = []
    after = None
    while True:  # the final standings in the board's order: positions 1..N, each once
        page = await board_results(table.db, board_id, 1000, after)
        listed += [r.position for r in page.items]
        if not page.has_next:
            break
        after = page.end_cursor
    assert listed == list(range(1, entrants + 1))

    board = await _board(table, board_id)
    assert board.status(now()) is BoardStatus.FINAL
    assert board.final_count == entrants
    assert board.close_due is None
    # Every entry frozen, with its guard: the live board holds what the results were made of.
    for entity in ((SCORE, PARTITIONED_SCORE), (ENTRY_GUARD,)):
        held = [i for i in items if any(e.holds(i) for e in entity)]
        assert len(held) == entrants
        assert all(i.get("frozen") is True for i in held)
    again = await asyncio.to_thread(_run, [], env, tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "nothing to close\n"


@pytest.mark.timeout(900)
async def test_a_close_killed_again_and_again_finishes_with_the_models_standings(
    table: Table, settings: Settings, tmp_path: Path
) -> None:
    await _kill_and_rerun(table, settings, tmp_path, entrants=5_000, partitions=1, seed=20261201)


@pytest.mark.timeout(900)
async def test_a_killed_close_of_a_write_sharded_board_finishes_with_the_models_standings(
    table: Table, settings: Settings, tmp_path: Path
) -> None:
    await _kill_and_rerun(table, settings, tmp_path, entrants=2_000, partitions=4, seed=20261202)


async def test_each_step_and_each_closed_board_is_printed(
    table: Table, settings: Settings, tmp_path: Path
) -> None:
    """Off a terminal, one line per step on stderr and one per closed board on stdout; the
    grace comes from LEADERBOARD_CLOSE_GRACE_SECONDS unless --grace says otherwise."""
    rng = random.Random(5)
    scores = [rng.randrange(0, 8) for _ in range(40)]
    await write_board(table.db, "cup", scores, ends_at=now() - timedelta(hours=1))
    await write_board(
        table.db, "recent", [3, 3, 1], ends_at=now() - timedelta(minutes=5), players=False
    )
    env = _env(settings, LEADERBOARD_CLOSE_GRACE_SECONDS="3600")

    first = await asyncio.to_thread(_run, [], env, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "closed cup: 40 entrants\n"
    assert [line for line in first.stderr.splitlines() if line.startswith("cup:")] == [
        "cup: freezing counts 32/32 (100%)",
        "cup: freezing entries 40/40 (100%)",
        "cup: writing results 40/40 (100%)",
    ]
    assert "\r" not in first.stderr
    assert (await _board(table, "recent")).closing_since is None  # not due an hour after

    second = await asyncio.to_thread(_run, ["--grace", "0"], env, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "closed recent: 3 entrants\n"
    third = await asyncio.to_thread(_run, [], env, tmp_path)
    assert third.returncode == 0, third.stderr
    assert third.stdout == "nothing to close\n"


async def test_a_named_board_must_be_due(table: Table, settings: Settings, tmp_path: Path) -> None:
    """--board closes the named boards only; one not due yet (or missing) is refused with its
    message and exit status 1 before any other is touched."""
    await write_board(table.db, "cup", [5, 4, 4, 1], ends_at=now() - timedelta(hours=1))
    await write_board(table.db, "live", [9], ends_at=now() + timedelta(hours=1), players=False)
    env = _env(settings)

    refused = await asyncio.to_thread(_run, ["--board", "cup", "--board", "live"], env, tmp_path)
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert "INVALID_ARGUMENT: leaderboard 'live' closes from " in refused.stderr
    assert (await _board(table, "cup")).closing_since is None

    missing = await asyncio.to_thread(_run, ["--board", "nowhere"], env, tmp_path)
    assert missing.returncode == 1
    assert "LEADERBOARD_NOT_FOUND: no leaderboard 'nowhere'" in missing.stderr

    closed = await asyncio.to_thread(_run, ["--board", "cup"], env, tmp_path)
    assert closed.returncode == 0, closed.stderr
    assert closed.stdout == "closed cup: 4 entrants\n"
    assert (await _board(table, "live")).closing_since is None


def test_the_bar_redraws_in_place_on_a_terminal() -> None:
    """On a terminal each drawing starts with a carriage return and covers the one before;
    each step ends on a line of its own, complete; a step cut off stays as far as it went."""
    screen = io.StringIO()
    bar = CloseBar(screen, "cup", in_place=True)
    bar.begin(Phase.COUNTS, 32)
    for done in (500, 1000, 0):  # a second pass of freezing the entries counts from 0
        bar(CloseProgress("cup", Phase.ENTRIES, done, 1200))
    bar(CloseProgress("cup", Phase.RESULTS, 500, 1200))
    bar.stop()
    lines = screen.getvalue().split("\n")
    assert [line.rsplit("\r", 1)[-1].rstrip() for line in lines] == [
        "cup: freezing counts [" + "#" * 30 + "] 32/32 (100%)",
        "cup: freezing entries [" + "#" * 30 + "] 1200/1200 (100%)",
        "cup: writing results [" + "#" * 12 + "." * 18 + "] 500/1200 (41%)",
        "",
    ]
    assert lines[1].count("\r") == 4  # 500, 1000, 1000 again and the step's end
