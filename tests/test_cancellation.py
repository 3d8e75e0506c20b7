"""A long-running loop stops when cancelled, even when a library swallowed the cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import random

from redis.asyncio import Redis

from rankindex.cancellation import raise_if_cancelled


async def test_a_task_whose_cancellation_was_swallowed_stops_at_the_next_check() -> None:
    rounds = 0

    async def loop() -> None:
        nonlocal rounds
        while True:
            raise_if_cancelled()
            rounds += 1
            # What a library that loses the cancellation does:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)

    task = asyncio.create_task(loop())
    await asyncio.sleep(0.01)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=5)
    assert done
    assert task.cancelled()
    assert rounds == 1


async def test_a_redis_loop_cancelled_at_any_moment_stops(redis_url: str) -> None:
    """Cancelled at random moments between and during its commands, a loop of Redis commands
    that checks once a round always stops (without the check, some cancellations that land
    during a command are lost and the loop runs on)."""
    redis = Redis.from_url(redis_url)
    rng = random.Random(7)

    async def loop() -> None:
        while True:
            raise_if_cancelled()
            await redis.set("cancellation-probe", "1", px=1000)
            await redis.get("cancellation-probe")

    try:
        for _ in range(300):
            task = asyncio.create_task(loop())
            await asyncio.sleep(rng.uniform(0, 0.003))
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=5)
            assert done, "the loop ran on after its cancellation"
            assert task.cancelled()
    finally:
        await redis.aclose()
