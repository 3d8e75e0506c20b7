"""One timed ban or erasure on a fresh table: the table loaded with BatchWriteItem, the call
timed with its DynamoDB calls and the items it wrote counted, and the table checked after.

The ban and the erasure are the dynamo layer's own functions (:func:`~dynamo.bans.ban_player`,
:func:`~dynamo.erasure.erase_player`), the ones the ``banPlayer`` and ``erasePlayer``
mutations call, on a client of the benchmark's own (no HTTP, no request budget: the erasure
runs to the end in one call, as the operators' command does).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from bench.core.loading import batch_write
from bench.core.servers import drop_table
from bench.core.stack import CREDENTIALS, CURSOR_SECRET, LOADER_CONFIG, REGION
from bench.moderation.calls import CallTimer, WriteCounter
from bench.moderation.data import BanTable, ErasureTable, ban_table, erasure_table
from dynamo.bans import ban_player
from dynamo.db import Db
from dynamo.erasure import erase_player
from dynamo.items import deserialize, now
from dynamo.metrics import CallCounter
from dynamo.scores import SCORE
from dynamo.table import create_table
from leaderboard.backend import open_table
from leaderboard.config import Settings

__all__ = ["ACTOR", "ModerationCheckError", "Trial", "ban_trial", "erasure_trial", "holding"]

ACTOR = "bench-moderation"
"""The actor the benchmark's actions are recorded with."""


class ModerationCheckError(AssertionError):
    """The table after a ban or an erasure is not what it should be."""


@dataclass(frozen=True)
class Trial:
    """One timed ban or erasure."""

    loaded_items: int
    load_seconds: float
    ms: float
    calls: dict[str, int]
    """DynamoDB calls by operation, in the order first called."""
    call_ms: dict[str, float]
    """Milliseconds spent waiting for each operation's calls."""
    written: dict[str, int]
    """Items written by kind: put, update, delete."""


@dataclass(frozen=True)
class _Tools:
    db: Db
    calls: CallCounter
    timer: CallTimer
    writes: WriteCounter


@asynccontextmanager
async def _fresh_table(endpoint_url: str) -> AsyncIterator[_Tools]:
    """A new table in the DynamoDB at ``endpoint_url``, deleted on leaving, with counters of
    the calls made on it and the items they write."""
    table = f"bench-moderation-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        endpoint_url=endpoint_url, region=REGION, table=table, cursor_secret=CURSOR_SECRET
    )
    async with open_table(settings, CREDENTIALS, config=LOADER_CONFIG) as db:
        await create_table(db.client, table)
        try:
            yield _Tools(db, CallCounter(db.client), CallTimer(db.client), WriteCounter(db.client))
        finally:
            await drop_table(db.client, table)


async def _load(tools: _Tools, items: list[dict[str, Any]]) -> float:
    """Write ``items``, then zero the counters; the seconds it took."""
    started = time.perf_counter()
    await batch_write(tools.db, items)
    seconds = time.perf_counter() - started
    tools.calls.reset()
    tools.timer.reset()
    tools.writes.reset()
    return seconds


def _trial(tools: _Tools, loaded: int, load_seconds: float, seconds: float) -> Trial:
    return Trial(
        loaded_items=loaded,
        load_seconds=round(load_seconds, 2),
        ms=round(seconds * 1000, 1),
        calls=tools.calls.snapshot(),
        call_ms=tools.timer.snapshot(),
        written=tools.writes.snapshot(),
    )


async def scan_table(db: Db) -> list[dict[str, Any]]:
    """Every item of the table, read with ConsistentRead."""
    kwargs: dict[str, Any] = {"TableName": db.table, "ConsistentRead": True}
    items: list[dict[str, Any]] = []
    while True:
        response = await db.client.scan(**kwargs)
        items += [deserialize(raw) for raw in response.get("Items", [])]
        last = response.get("LastEvaluatedKey")
        if not last:
            return items
        kwargs["ExclusiveStartKey"] = last


def holding(items: list[dict[str, Any]], needle: str) -> list[dict[str, Any]]:
    """The items holding ``needle`` in any key or value (case ignored)."""

    def text(value: Any) -> str:
        if isinstance(value, dict):
            return " ".join(f"{k} {text(v)}" for k, v in value.items())
        if isinstance(value, list):
            return " ".join(text(v) for v in value)
        return str(value)

    return [i for i in items if needle.casefold() in text(i).casefold()]


def _scores_of(items: list[dict[str, Any]], player_id: str) -> list[dict[str, Any]]:
    return [i for i in items if SCORE.holds(i) and i.get("playerId") == player_id]


async def _check_banned(db: Db, table: BanTable, removed: int) -> None:
    """No Score item of the banned player is left; every board kept the other player's."""
    if removed != len(table.boards):
        raise ModerationCheckError(f"the ban removed {removed} of {len(table.boards)} entries")
    items = await scan_table(db)
    left = _scores_of(items, table.player_id)
    if left:
        raise ModerationCheckError(
            f"{len(left)} Score items of the banned player remain: {left[:3]}"
        )
    others = {i["leaderboardId"] for i in items if SCORE.holds(i)}
    if others != set(table.boards):
        raise ModerationCheckError("the ban took Score items of another player")


async def _check_erased(db: Db, table: ErasureTable, deleted: int) -> None:
    """No item holds the erased player's id (nor so its e-mail address); every item that
    named it was deleted, and the other player's entries stay."""
    items = await scan_table(db)
    left = holding(items, table.player_id)
    if left:
        raise ModerationCheckError(
            f"{len(left)} items still hold the erased player's id: {left[:3]}"
        )
    if deleted != table.player_items:
        raise ModerationCheckError(
            f"the erasure deleted {deleted} items; the player had {table.player_items}"
        )
    others = {i["leaderboardId"] for i in items if SCORE.holds(i)}
    if others != set(table.boards):
        raise ModerationCheckError("the erasure took Score items of another player")


async def ban_trial(endpoint_url: str, boards: int) -> Trial:
    """Ban a player with an entry on ``boards`` boards, on a fresh table; checked after."""
    async with _fresh_table(endpoint_url) as tools:
        table = ban_table(boards, now())
        load_seconds = await _load(tools, table.items)
        started = time.perf_counter()
        result = await ban_player(
            tools.db, player_id=table.player_id, reason="benchmarked ban", actor=ACTOR
        )
        seconds = time.perf_counter() - started
        trial = _trial(tools, len(table.items), load_seconds, seconds)
        await _check_banned(tools.db, table, result.action.removed_count)
    return trial


async def erasure_trial(endpoint_url: str, sessions: int) -> Trial:
    """Erase a player with ``sessions`` sessions, on a fresh table; checked after."""
    async with _fresh_table(endpoint_url) as tools:
        table = erasure_table(sessions, now())
        load_seconds = await _load(tools, table.items)
        started = time.perf_counter()
        result = await erase_player(tools.db, player_id=table.player_id, actor=ACTOR)
        seconds = time.perf_counter() - started
        trial = _trial(tools, len(table.items), load_seconds, seconds)
        if not result.complete:
            raise ModerationCheckError("the erasure stopped before the end")
        await _check_erased(tools.db, table, trial.written["delete"])
    return trial
