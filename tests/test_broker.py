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
    broker, read = Broker(), Reads()
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
