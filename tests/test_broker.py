"""The broker's shared reads: one read per notice for every subscriber it wakes."""

from __future__ import annotations

import asyncio

import pytest

from resolvers.broker import Broker


class Reads:
    """A read that counts its calls and can be held open."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.release.set()
        self.fail = False

    async def __call__(self) -> int:
        self.calls += 1
        number = self.calls
        await self.release.wait()
        if self.fail:
            raise RuntimeError("the read failed")
        return number


async def test_callers_between_notices_share_one_read_and_a_notice_starts_another() -> None:
    # The broker's clock stands still: a finished read is never older than its age bound.
    broker, read = Broker(clock=lambda: 100.0), Reads()
    async with broker.listen("b"), broker.listen("b"):
        read.release.clear()
        waiting = [asyncio.create_task(broker.shared("b", "top", read)) for _ in range(50)]
        await asyncio.sleep(0)
        read.release.set()
        assert await asyncio.gather(*waiting) == [1] * 50
        assert await broker.shared("b", "top", read) == 1  # finished just now: still good
        assert await broker.shared("b", "other", read) == 2  # another key, another read
        broker.publish("b")
        assert await broker.shared("b", "top", read) == 3
        assert read.calls == 3


async def test_a_read_begun_before_a_notice_does_not_answer_after_it() -> None:
    broker, read = Broker(), Reads()
    async with broker.listen("b"):
        read.release.clear()
        early = asyncio.create_task(broker.shared("b", "top", read))
        await asyncio.sleep(0)
        broker.publish("b")
        late = asyncio.create_task(broker.shared("b", "top", read))
        await asyncio.sleep(0)
        read.release.set()
        assert (await early, await late) == (1, 2)


async def test_a_cancelled_caller_cancels_nobody_else_and_failures_are_not_kept() -> None:
    broker, read = Broker(), Reads()
    async with broker.listen("b"):
        read.release.clear()
        first = asyncio.create_task(broker.shared("b", "top", read))
        second = asyncio.create_task(broker.shared("b", "top", read))
        await asyncio.sleep(0)
        first.cancel()
        read.release.set()
        assert await second == 1
        read.fail = True
        broker.publish("b")
        with pytest.raises(RuntimeError):
            await broker.shared("b", "top", read)
        read.fail = False
        assert await broker.shared("b", "top", read) == 3  # the failure was not kept


async def test_a_finished_read_grows_stale_and_an_unwatched_topic_keeps_nothing() -> None:
    broker, read = Broker(shared_read_age=0.0), Reads()
    async with broker.listen("b"):
        assert await broker.shared("b", "top", read) == 1
        assert await broker.shared("b", "top", read) == 2
    assert broker.listening("b") == 0
    async with broker.listen("b"):
        assert await broker.shared("b", "top", read) == 3


async def test_a_board_quiet_for_the_refresh_period_gets_a_notice_and_one_shared_read() -> None:
    now = [100.0]
    broker, read = Broker(clock=lambda: now[0]), Reads()
    async with broker.listen("quiet") as a, broker.listen("quiet") as b, broker.listen("busy") as c:
        assert await broker.shared("quiet", "top", read) == 1
        now[0] += 20.0
        broker.publish("busy")
        await c.wait()
        now[0] += 9.0
        assert broker.refresh(30.0) == 0  # 29 s without a notice: not yet
        now[0] += 1.0
        assert broker.refresh(30.0) == 1  # "quiet" only: "busy" had one 10 s ago
        await asyncio.wait_for(asyncio.gather(a.wait(), b.wait()), 30)
        # Both subscribers re-read, and share that read.
        assert await broker.shared("quiet", "top", read) == 2
        assert await broker.shared("quiet", "top", read) == 2
        assert broker.refresh(30.0) == 0  # the refresh counts as the topic's latest notice
        now[0] += 30.0
        assert broker.refresh(30.0) == 2
    assert broker.refresh(0.0) == 0  # nobody listens: nothing is watched
