"""Running the benchmark: every timed run of every size on a fresh DynamoDB Local of its own
(in one long-lived server, each run slower than the one before it), after an untimed one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from bench.core.report import log
from bench.core.servers import dynamodb_per_size
from bench.moderation.measure import Trial, ban_trial, erasure_trial
from bench.moderation.report import BAN, ERASURE, SizeResult, summarise
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = ["run"]

TrialFn = Callable[[str, int], Awaitable[Trial]]

WARMUP_SIZES = {BAN: 25, ERASURE: 100}
"""The size of the untimed run on each new DynamoDB Local, before the timed one: a fresh
server answers its first calls several times slower than the next (its JVM warming up)."""


async def _warm_trial(operation: str, trial: TrialFn, endpoint_url: str, size: int) -> Trial:
    await trial(endpoint_url, WARMUP_SIZES[operation])
    return await trial(endpoint_url, size)


def _operation(
    operation: str,
    trial: TrialFn,
    sizes: Sequence[int],
    cache_dir: Path,
    repeat: int,
    on_start: Callable[[EmbeddedDynamoDB], None],
) -> list[SizeResult]:
    results: list[SizeResult] = []
    for size in sizes:
        trials: list[Trial] = []
        for _, local in dynamodb_per_size([size] * repeat, cache_dir):
            on_start(local)
            trials.append(asyncio.run(_warm_trial(operation, trial, local.endpoint_url, size)))
        result = summarise(operation, size, trials)
        log(
            f"[{operation} {size:,}] median {result.median_ms:,.1f} ms"
            f" ({result.min_ms:,.1f}-{result.max_ms:,.1f}), {sum(result.calls.values())} calls,"
            f" {result.written:,} items written, {result.deleted:,} deleted"
        )
        results.append(result)
    return results


def run(
    cache_dir: Path,
    *,
    boards: Sequence[int],
    sessions: Sequence[int],
    repeat: int,
    on_start: Callable[[EmbeddedDynamoDB], None],
) -> list[SizeResult]:
    """Bans of a player on each number of ``boards``, then erasures of a player with each
    number of ``sessions``, ``repeat`` times each, every time on a fresh DynamoDB Local and
    after an untimed run of :data:`WARMUP_SIZES`; ``on_start`` sees each server once it
    answers."""
    return [
        *_operation(BAN, ban_trial, boards, cache_dir, repeat, on_start),
        *_operation(ERASURE, erasure_trial, sessions, cache_dir, repeat, on_start),
    ]
