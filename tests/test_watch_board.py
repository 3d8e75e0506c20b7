"""examples/watch_board.py, the tutorial's live board: it prints a board's top at once, and
again when a play changes it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.conftest import WAIT, Api

SCRIPT = Path(__file__).resolve().parent.parent / "examples" / "watch_board.py"


async def _line(stream: asyncio.StreamReader) -> str:
    return (await asyncio.wait_for(stream.readline(), WAIT)).decode()


async def test_the_script_prints_the_top_then_the_top_a_play_changed(api: Api) -> None:
    await api.create_board("duel")
    await api.create_player("ann", "Ann")
    await api.create_player("bob", "Bob")
    await api.submit("ann", "duel", 300)
    url = str(api.http.make_url("/graphql"))
    watcher = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        "duel",
        "--url",
        url,
        "--first",
        "2",
        "--pushes",
        "2",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert watcher.stdout is not None
    assert watcher.stderr is not None
    try:
        first = [await _line(watcher.stdout) for _ in range(2)]
        assert [line.split() for line in first] == [["duel:"], ["1", "300", "Ann"]]
        await api.submit("bob", "duel", 500)
        second = [await _line(watcher.stdout) for _ in range(3)]
        assert [line.split() for line in second] == [
            ["duel:"],
            ["1", "500", "Bob"],
            ["2", "300", "Ann"],
        ]
        assert await asyncio.wait_for(watcher.wait(), WAIT) == 0
        assert await watcher.stderr.read() == b""
    finally:
        if watcher.returncode is None:
            watcher.kill()
            await watcher.wait()


async def test_the_script_reports_an_unknown_board_and_exits_with_1(api: Api) -> None:
    url = str(api.http.make_url("/graphql"))
    watcher = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        "no-such-board",
        "--url",
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(watcher.communicate(), WAIT)
    assert watcher.returncode == 1
    assert out == b""
    assert b"LEADERBOARD_NOT_FOUND" in err
