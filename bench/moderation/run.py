"""Running the benchmark: each size on its own fresh DynamoDB Local, each trial on a fresh
table in it."""

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
"""The size of the untimed run on each new DynamoDB Local, before the timed ones: a fresh
server answers its first calls several times slower than the next (its JVM warming up)."""


async def _trials(
    operation: str, trial: TrialFn, endpoint_url: str, size: int, repeat: int
) -> list[Trial]:
    await trial(endpoint_url, WARMUP_SIZES[operation])
    return [await trial(endpoint_url, size) for _ in range(repeat)]


def _operation(
    operation: str,
    trial: TrialFn,
    sizes: Sequence[int],
    cache_dir: Path,
    repeat: int,
    on_start: Callable[[EmbeddedDynamoDB], None],
) -> list[SizeResult]:
    results: list[SizeResult] = []
    for size, local in dynamodb_per_size(sizes, cache_dir):
        on_start(local)
        trials = asyncio.run(_trials(operation, trial, local.endpoint_url, size, repeat))
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
    number of ``sessions``, ``repeat`` times each after one untimed run of
    :data:`WARMUP_SIZES`; ``on_start`` sees each server once it
    answers."""
    return [
        *_operation(BAN, ban_trial, boards, cache_dir, repeat, on_start),
        *_operation(ERASURE, erasure_trial, sessions, cache_dir, repeat, on_start),
    ]
