"""Loading boards: through the real submission path, or in bulk with BatchWriteItem.

Boards up to :data:`SUBMIT_PATH_MAX` entries go through createPlayer and submitScore's own code;
larger ones are written with BatchWriteItem, item for item what the submission path writes.
A play may enter several boards (one session, an entry on each).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bench.core.items import play_items
from bench.core.workload import LoadedPlayer, new_player
from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.ids import new_session_id
from dynamo.items import now, serialize
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem, create_leaderboard
from dynamo.play_writes import record_play
from dynamo.players import create_player
from dynamo.plays import Play, PlayResult

__all__ = [
    "BATCH_WRITE_LIMIT",
    "LOAD_CONCURRENCY",
    "SUBMIT_PATH_MAX",
    "Loader",
    "batch_write",
    "load_boards_with_batch_writes",
    "load_boards_with_submissions",
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

Loader = Callable[[Db, Sequence[LeaderboardItem], Sequence[Play]], Awaitable[list[LoadedPlayer]]]
"""Creates the boards, loads the plays (each naming some of them) and returns the players."""


async def _submit_retrying(db: Db, sub: Play) -> PlayResult:
    for attempt in range(_CONFLICT_RETRIES):
        try:
            return await record_play(db, sub)
        except LeaderboardError as error:
            if error.code is not ErrorCode.SUBMISSION_CONFLICT or attempt == _CONFLICT_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


async def load_boards_with_submissions(
    db: Db, boards: Sequence[LeaderboardItem], plays: Sequence[Play]
) -> list[LoadedPlayer]:
    """createPlayer and submitScore's own code paths, LOAD_CONCURRENCY at a time."""
    for board in boards:
        await create_leaderboard(db, board)
    gate = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def one(sub: Play) -> LoadedPlayer:
        async with gate:
            player = await create_player(db, new_player(sub.player_id, now()))
            result = await _submit_retrying(db, sub)
        return LoadedPlayer(
            player.player_id,
            player.email,
            sub.score,
            result.session.session_id,
            sub.game_id,
            sub.leaderboard_ids,
        )

    return list(await asyncio.gather(*(one(sub) for sub in plays)))


async def load_with_submissions(
    db: Db, board: LeaderboardItem, plays: Sequence[Play]
) -> list[LoadedPlayer]:
    """:func:`load_boards_with_submissions` for plays on ``board`` alone."""
    return await load_boards_with_submissions(db, [board], plays)


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


async def load_boards_with_batch_writes(
    db: Db, boards: Sequence[LeaderboardItem], plays: Sequence[Play]
) -> list[LoadedPlayer]:
    """The items of :func:`~bench.core.items.play_items` for every play through BatchWriteItem,
    then each board's entryCount in one UpdateItem."""
    by_id = {b.leaderboard_id: b for b in boards}
    for board in boards:
        await create_leaderboard(db, board)
    items: list[dict[str, Any]] = []
    loaded: list[LoadedPlayer] = []
    entries = dict.fromkeys(by_id, 0)
    for sub in plays:
        session_id = new_session_id()
        items.extend(play_items([by_id[b] for b in sub.leaderboard_ids], sub, now(), session_id))
        for b in sub.leaderboard_ids:
            entries[b] += 1
        loaded.append(
            LoadedPlayer(
                sub.player_id,
                f"{sub.player_id}@bench.example",
                sub.score,
                session_id,
                sub.game_id,
                sub.leaderboard_ids,
            )
        )
    await batch_write(db, items)
    for board_id, count in entries.items():
        await db.client.update_item(
            TableName=db.table,
            Key=serialize(LEADERBOARD.key_attributes(leaderboard_id=board_id)),
            UpdateExpression="SET entryCount = :count",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues=serialize({":count": count}),
        )
    return loaded


async def load_with_batch_writes(
    db: Db, board: LeaderboardItem, plays: Sequence[Play]
) -> list[LoadedPlayer]:
    """:func:`load_boards_with_batch_writes` for plays on ``board`` alone."""
    return await load_boards_with_batch_writes(db, [board], plays)


def loader_for(entries: int) -> tuple[str, Loader]:
    """The name of the load method for boards of ``entries`` players, and the loader itself."""
    if entries <= SUBMIT_PATH_MAX:
        return "submit_score", load_boards_with_submissions
    return "BatchWriteItem", load_boards_with_batch_writes
