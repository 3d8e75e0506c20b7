"""Loading a board: through the real submission path, or in bulk with BatchWriteItem.

Boards up to :data:`SUBMIT_PATH_MAX` entries go through createPlayer and submitScore's own code;
larger ones are written with BatchWriteItem, item for item what the submission path writes.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bench.items import bulk_items
from bench.workload import LoadedPlayer, new_player
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.ids import new_session_id
from dynamo.leaderboards import LeaderboardItem, board_key, create_leaderboard
from dynamo.players import create_player
from dynamo.plays import Submission, SubmitResult
from dynamo.submit import submit_score
from dynamo.table import Db, now, serialize

__all__ = [
    "BATCH_WRITE_LIMIT",
    "LOAD_CONCURRENCY",
    "SUBMIT_PATH_MAX",
    "Loader",
    "batch_write",
    "load_with_batch_writes",
    "load_with_submissions",
    "loader_for",
]

SUBMIT_PATH_MAX = 2_000
"""Boards up to this size are loaded through submit_score, larger ones with BatchWriteItem."""

LOAD_CONCURRENCY = 32
BATCH_WRITE_LIMIT = 25
_WRITE_RETRIES = 8
_CONFLICT_RETRIES = 5

Loader = Callable[[Db, LeaderboardItem, Sequence[Submission]], Awaitable[list[LoadedPlayer]]]
"""Creates the board, loads its plays and returns the players it now holds."""


async def _submit_retrying(db: Db, sub: Submission) -> SubmitResult:
    for attempt in range(_CONFLICT_RETRIES):
        try:
            return await submit_score(db, sub)
        except LeaderboardError as error:
            if error.code is not ErrorCode.SUBMISSION_CONFLICT or attempt == _CONFLICT_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


async def load_with_submissions(
    db: Db, board: LeaderboardItem, plays: Sequence[Submission]
) -> list[LoadedPlayer]:
    """createPlayer and submitScore's own code paths, LOAD_CONCURRENCY at a time."""
    await create_leaderboard(db, board)
    gate = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def one(sub: Submission) -> LoadedPlayer:
        async with gate:
            player = await create_player(db, new_player(sub.player_id, now()))
            result = await _submit_retrying(db, sub)
        return LoadedPlayer(
            player.player_id, player.email, sub.score, result.session.session_id, sub.game_id
        )

    return list(await asyncio.gather(*(one(sub) for sub in plays)))


async def batch_write(db: Db, items: Sequence[dict[str, Any]]) -> None:
    """Put ``items`` with BatchWriteItem, BATCH_WRITE_LIMIT per call and LOAD_CONCURRENCY
    calls at a time, retrying unprocessed items with jittered backoff."""
    gate = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def write(chunk: Sequence[dict[str, Any]]) -> None:
        request: Any = {db.table: [{"PutRequest": {"Item": serialize(i)}} for i in chunk]}
        async with gate:
            for attempt in range(_WRITE_RETRIES + 1):
                response = await db.client.batch_write_item(RequestItems=request)
                request = response.get("UnprocessedItems") or {}
                if not request:
                    return
                await asyncio.sleep(random.uniform(0, 0.05 * 2**attempt))
        raise RuntimeError("BatchWriteItem left items unprocessed after retries")

    chunks = [items[i : i + BATCH_WRITE_LIMIT] for i in range(0, len(items), BATCH_WRITE_LIMIT)]
    await asyncio.gather(*(write(c) for c in chunks))


async def load_with_batch_writes(
    db: Db, board: LeaderboardItem, plays: Sequence[Submission]
) -> list[LoadedPlayer]:
    """The items of :func:`~bench.items.bulk_items` for every play through BatchWriteItem, then
    the board's entryCount in one UpdateItem."""
    await create_leaderboard(db, board)
    items: list[dict[str, Any]] = []
    loaded: list[LoadedPlayer] = []
    for sub in plays:
        session_id = new_session_id()
        items.extend(bulk_items(board, sub, now(), session_id))
        loaded.append(
            LoadedPlayer(
                sub.player_id,
                f"{sub.player_id}@bench.example",
                sub.score,
                session_id,
                sub.game_id,
            )
        )
    await batch_write(db, items)
    pk, sk = board_key(board.leaderboard_id)
    await db.client.update_item(
        TableName=db.table,
        Key=serialize({"pk": pk, "sk": sk}),
        UpdateExpression="SET entryCount = :count",
        ConditionExpression="attribute_exists(pk)",
        ExpressionAttributeValues=serialize({":count": len(plays)}),
    )
    return loaded


def loader_for(entries: int) -> tuple[str, Loader]:
    """The name of the load method for a board of ``entries`` players, and the loader itself."""
    if entries <= SUBMIT_PATH_MAX:
        return "submit_score", load_with_submissions
    return "BatchWriteItem", load_with_batch_writes
