"""The workers' mesh (leaderboard/peers.py) over real Unix sockets, and what a process does
with its siblings' notices and its own writes (resolvers/changes.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dynamo.errors import ErrorCode, LeaderboardError
from leaderboard.peers import MAX_BUFFER_BYTES, NOTICES_PER_LINE, WorkerPeers, socket_path
from rankindex.notices import Notice, NoticeKind
from resolvers.broker import Broker
from resolvers.changes import Arrivals, writing
from resolvers.dependencies import TopPage
from resolvers.response_cache import ResponseCache


@dataclass
class Heard:
    notices: list[Notice] = field(default_factory=list)
    resyncs: int = 0

    def resync(self) -> None:
        self.resyncs += 1


@asynccontextmanager
async def _mesh(directory: Path, *pids: int) -> AsyncIterator[dict[int, tuple[WorkerPeers, Heard]]]:
    """Workers ``pids`` started one after the other, as a master forks them."""
    async with AsyncExitStack() as stack:
        workers: dict[int, tuple[WorkerPeers, Heard]] = {}
        for pid in pids:
            heard = Heard()
            peers = WorkerPeers(
                directory, on_notice=heard.notices.append, on_resync=heard.resync, pid=pid
            )
            await peers.start()
            stack.push_async_callback(peers.stop)
            workers[pid] = (peers, heard)
        yield workers


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within 5 s")


def _put(board: str, player: str, version: int) -> Notice:
    return Notice(
        NoticeKind.PUT,
        board=board,
        player=player,
        before=None,
        after=version * 10,
        version=version,
        fresh=version == 1,
    )


async def test_a_write_s_notices_reach_every_sibling_once_and_in_order(tmp_path: Path) -> None:
    async with _mesh(tmp_path, 101, 102, 103) as workers:
        (one, heard_one), (two, heard_two), (three, heard_three) = workers.values()
        # Each knows the others, whether it started before or after them.
        assert [one.siblings, two.siblings, three.siblings] == [[102, 103], [101, 103], [101, 102]]
        sent = [_put("b", f"p{n}", n) for n in range(1, 2 * NOTICES_PER_LINE + 2)]
        one.tell(sent)
        two.tell([Notice(NoticeKind.BOARD, board="c")])
        await _until(lambda: len(heard_two.notices) == len(sent))
        await _until(lambda: len(heard_three.notices) == len(sent) + 1)
        assert heard_two.notices == sent
        assert heard_three.notices[:1] + heard_three.notices[-1:] in (
            [sent[0], Notice(NoticeKind.BOARD, board="c")],
            [Notice(NoticeKind.BOARD, board="c"), sent[-1]],
        )
        assert [n for n in heard_three.notices if n.kind is NoticeKind.PUT] == sent
        assert heard_one.notices == [Notice(NoticeKind.BOARD, board="c")]
        assert one.sent == 2 * 3  # three lines, to each of two siblings
        assert (heard_one.resyncs, heard_two.resyncs, heard_three.resyncs) == (0, 0, 0)


async def test_an_unknown_outcome_is_a_lost_place_for_every_sibling(tmp_path: Path) -> None:
    async with _mesh(tmp_path, 101, 102) as workers:
        (one, heard_one), (_, heard_two) = workers.values()
        one.tell_resync()
        await _until(lambda: heard_two.resyncs == 1)
        assert heard_one.resyncs == 0


async def test_a_sibling_that_goes_is_forgotten_after_one_resync(tmp_path: Path) -> None:
    async with _mesh(tmp_path, 101) as survivors:
        ((one, heard_one),) = survivors.values()
        async with _mesh(tmp_path, 102):
            await _until(lambda: one.siblings == [102])
        assert not socket_path(tmp_path, 102).exists()
        await _until(lambda: one.siblings == [])
        assert heard_one.resyncs == 1  # its notices in flight may be lost
        one.tell([_put("b", "p", 1)])  # to nobody, and no error
        assert one.status() == {"siblings": 0, "sent": 0, "received": 0, "resyncs": 1}


async def test_a_sibling_that_stops_reading_is_cut_off(tmp_path: Path) -> None:
    async with _mesh(tmp_path, 101) as workers:
        ((one, _),) = workers.values()
        # A sibling that greets and then never reads again.
        reader, writer = await asyncio.open_unix_connection(str(socket_path(tmp_path, 101)))
        writer.write(json.dumps({"hello": 999}).encode() + b"\n")
        assert json.loads(await reader.readline()) == {"hello": 101}
        await _until(lambda: one.siblings == [999])
        big = [_put("b" * 500, f"p{n}", n) for n in range(NOTICES_PER_LINE)]
        for _ in range(4 * MAX_BUFFER_BYTES // (500 * NOTICES_PER_LINE)):
            one.tell(big)
            if not one.siblings:
                break
        assert one.siblings == []
        writer.close()


@dataclass
class Told:
    """The peers a process's writes are told to, as the broker sees them."""

    notices: list[Notice] = field(default_factory=list)
    resyncs: int = 0

    def tell(self, notices: Sequence[Notice]) -> None:
        self.notices += notices

    def tell_resync(self) -> None:
        self.resyncs += 1


def test_a_committed_write_is_told_to_the_siblings_and_an_unknown_one_as_a_resync() -> None:
    broker, told = Broker(), Told()
    broker.peers = told
    change = _put("b", "ann", 2)
    with writing(None, broker, atomic=True) as written:
        written.changes.append(change)
        written.boards.append("c")
        written.players.append("ann")
    assert told.notices == [
        change,
        Notice(NoticeKind.BOARD, board="c"),
        Notice(NoticeKind.PLAYER, player="ann"),
    ]
    with pytest.raises(LeaderboardError), writing(None, broker, atomic=True):
        raise LeaderboardError(ErrorCode.SCORE_OUT_OF_RANGE, "refused: nothing written")
    assert told.resyncs == 0
    with pytest.raises(LeaderboardError), writing(None, broker, atomic=True):
        raise LeaderboardError(ErrorCode.OUTCOME_UNKNOWN, "may or may not have been written")
    assert (len(told.notices), told.resyncs) == (3, 1)


async def test_a_sibling_s_play_evicts_wakes_and_makes_the_feed_s_copy_a_repeat() -> None:
    broker = Broker()
    cache = ResponseCache(1 << 20, max_age=30)
    arrivals = Arrivals(broker, cache)
    cache.put(b"page", b"{}", [TopPage("b", None)], cache.begin())
    play = _put("b", "ann", 3)
    async with broker.listen("b") as listener:
        arrivals.from_sibling(play)
        await asyncio.wait_for(listener.wait(), 1)
        assert cache.get(b"page") is None
        # The board's kept reads are consistent now, as after a write through this process.
        assert broker.writes.recent("b")
        # The change feed's copy of that play is a repeat: it wakes nobody again.
        arrivals.from_feed(play)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(listener.wait(), 0.2)
        # Another change of the entry does.
        arrivals.from_feed(_put("b", "ann", 4))
        await asyncio.wait_for(listener.wait(), 1)
