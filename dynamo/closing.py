"""The close of a board whose period is over: its final standings, frozen and written once.

A board with an ``endsAt`` waits in GSI1's ``CLOSE_DUE`` partition (``closeDue``, its end in
epoch milliseconds) from its creation. ``leaderboard close-periods`` (:func:`close_due_boards`)
closes every board whose end is ``grace`` behind it, ``grace`` being longer than a play may
take (its request deadline, 10 s by default): a play admitted before ``endsAt`` has committed
or failed by then. The close never writes an item that plays of different players share with
each other (nothing any play touches but its own player's items and count shard), in four
steps, each safe to repeat and to run twice at once:

1. **Begin**: the board's item gains ``closingSince`` (one UpdateItem, conditional on its
   absence). From then on every play's consistent read of the board finds it not open
   (``LEADERBOARD_CLOSED``), and ``removeEntry`` refuses it.
2. **COUNTS**: each of the board's 32·N count shards is written ``frozen`` (created where no
   player counted in it yet). A first entry's transaction is conditional on its shard not
   being frozen, so from here no new entrant can commit.
3. **ENTRIES**: each Score item not yet frozen (a consistent Query of each partition,
   filtered on ``frozen``) has its entry guard frozen (conditional on the guard still holding
   that Score item), then itself. Every play's, removal's and ban's transaction is conditional
   on the guard not being frozen. A play that committed before its guard froze may have moved
   its Score item where this pass had already read: the step repeats until a pass finds no
   Score item unfrozen, which the frozen guards make final. Then the entrants are counted
   (the board's count shards, read consistently) into ``finalCount``.
4. **RESULTS**: the frozen board is read in its order, consistently, a page at a time, and
   each entrant's Result item (dynamo/results.py) is written (BatchWriteItem: the same item
   whichever close writes it). After each page the board's ``closeCursor`` (the last sort key
   read, the position, the rank and the score it ended on) moves on, conditional on where it
   was, so a close killed anywhere goes on from the last page it recorded, and one of two
   closes at once takes the other's cursor where it finds it moved.
5. **FINAL**: one UpdateItem, conditional on the cursor at the end, sets ``closedAt``, takes
   the board out of the ``CLOSE_DUE`` partition and puts it in GSI2's ``CLOSED_BOARDS`` one
   (the boards in the order they closed: the results feed, dynamo/result_feed.py); the
   board's item is kept as long as its results (``archiveDays`` after ``endsAt``, or for
   ever), the live entries expire with their own ``ttl``.

Only an erasure takes a frozen entry off its board (and deletes the player's result with its
partition); the others' results keep the ranks and total the close gave them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from dynamo.db import Db
from dynamo.deliveries import put_delivery
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import serialize, stamp
from dynamo.leaderboards import (
    LEADERBOARD,
    LeaderboardItem,
    SortOrder,
    close_due,
    count_entries,
    count_shard_keys,
    read_board,
)
from dynamo.reads import query_run
from dynamo.results import RESULT, ResultItem
from dynamo.rewards import tier_of
from dynamo.scores import SCORE, ScoreItem, score_partitions, top_scores_after
from dynamo.single_writes import update_when_free
from dynamo.table import GSI1, GSI2

__all__ = [
    "DEFAULT_GRACE",
    "RESULT_PAGE",
    "CloseProgress",
    "Phase",
    "close_board",
    "close_due_boards",
    "due_boards",
]

DEFAULT_GRACE = timedelta(seconds=60)
"""How long after a board's end its close begins, by default: longer than a play's request
deadline (10 s by default), so that every play admitted before the end has committed or failed,
with room for the clocks of the service's instances to differ by tens of seconds."""
RESULT_PAGE = 500
"""Entrants read and written between two moves of the close's cursor."""
_IN_FLIGHT = 16
"""Writes of one close in flight at once."""
_MAX_FREEZE_PASSES = 20
"""Passes of step 3 before the close gives up (each pass after the first freezes only the
entries plays moved during the one before; a frozen entry cannot move)."""
_BATCH_WRITE = 25
_UNPROCESSED_ROUNDS = 10


class Phase(StrEnum):
    COUNTS = "COUNTS"
    ENTRIES = "ENTRIES"
    RESULTS = "RESULTS"
    FINAL = "FINAL"


@dataclass(frozen=True)
class CloseProgress:
    """How far one board's close went: its step, and the entrants it went through of
    ``total`` (None while they are not counted)."""

    leaderboard_id: str
    phase: Phase
    done: int
    total: int | None


Progress = Callable[[CloseProgress], None]


@dataclass
class _Cursor:
    """Where the RESULTS step stands (the board's ``closeCursor``, as JSON text)."""

    after: str | None = None
    """The sort key of the last entrant whose result was written."""
    position: int = 0
    rank: int = 0
    score: int | None = None

    @classmethod
    def of(cls, text: str | None) -> _Cursor:
        return cls(**json.loads(text)) if text else cls()

    def text(self) -> str:
        return json.dumps(
            {
                "after": self.after,
                "position": self.position,
                "rank": self.rank,
                "score": self.score,
            },
            separators=(",", ":"),
        )


async def due_boards(db: Db, cutoff: datetime) -> list[str]:
    """The ids of the boards awaiting their close whose ``endsAt`` is at or before ``cutoff``,
    those due first first (GSI1's ``CLOSE_DUE`` partition, every page)."""
    ipk, _ = LEADERBOARD.indexes[GSI1]
    found: list[str] = []
    start: dict[str, str] | None = None
    while True:
        items, start = await query_run(
            db,
            key_condition="gsi1pk = :pk AND gsi1sk < :due",
            values={":pk": ipk.fill(), ":due": close_due(cutoff + timedelta(milliseconds=1))},
            limit=1000,
            index=GSI1,
            descending=False,
            start=start,
        )
        found.extend(i["leaderboardId"]["S"] for i in items)
        if start is None:
            return found


async def close_due_boards(
    db: Db,
    at: datetime,
    *,
    grace: timedelta = DEFAULT_GRACE,
    progress: Progress | None = None,
    outbox: bool = False,
) -> list[LeaderboardItem]:
    """Close every board whose end is ``grace`` or more before ``at``, one after the other;
    the boards as they ended (FINAL). ``outbox``: as :func:`close_board`'s."""
    return [
        await close_board(db, board_id, at=at, grace=grace, progress=progress, outbox=outbox)
        for board_id in await due_boards(db, at - grace)
    ]


async def close_board(
    db: Db,
    leaderboard_id: str,
    *,
    at: datetime,
    grace: timedelta = DEFAULT_GRACE,
    progress: Progress | None = None,
    outbox: bool = False,
) -> LeaderboardItem:
    """Close the board (or go on with its close from where it stopped) and return it FINAL.
    LEADERBOARD_NOT_FOUND for no board; INVALID_ARGUMENT for a board with no end, or whose
    end is less than ``grace`` before ``at``. With ``outbox``, a board with entrants gets its
    Delivery item in the webhook outbox (dynamo/deliveries.py) just before it becomes FINAL."""
    started = time.monotonic()
    board = await _read(db, leaderboard_id)
    report = progress or (lambda _: None)
    while board.closed_at is None:
        if board.closing_since is None:
            board = await _begin(db, board, at, grace)
        elif board.close_phase == Phase.COUNTS:
            await _freeze_counts(db, board)
            board = await _advance(db, board, Phase.COUNTS, Phase.ENTRIES)
        elif board.close_phase == Phase.ENTRIES:
            entrants = await _count(db, board)
            await _freeze_entries(db, board, _entries_progress(board, entrants, report))
            board = await _advance(
                db,
                board,
                Phase.ENTRIES,
                Phase.RESULTS,
                final_count=await _count(db, board),
                cursor=_Cursor().text(),
            )
        else:
            board = await _write_results(db, board, at, report, outbox, started)
    report(_at(board, Phase.FINAL, board.final_count or 0, board.final_count))
    return board


def _entries_progress(
    board: LeaderboardItem, total: int, report: Progress
) -> Callable[[int], None]:
    return lambda done: report(_at(board, Phase.ENTRIES, min(done, total), total))


def _at(board: LeaderboardItem, phase: Phase, done: int, total: int | None) -> CloseProgress:
    return CloseProgress(board.leaderboard_id, phase, done, total)


async def _read(db: Db, leaderboard_id: str) -> LeaderboardItem:
    board = await read_board(db, leaderboard_id, consistent=True, count=False)
    if board is None:
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_NOT_FOUND,
            f"no leaderboard {leaderboard_id!r}",
            Subject.LEADERBOARD,
        )
    return board


async def _count(db: Db, board: LeaderboardItem) -> int:
    """The board's entrants as its count shards stand now (read consistently)."""
    fresh = await read_board(db, board.leaderboard_id, consistent=True, count=False)
    if fresh is None:
        return 0
    return (await count_entries(db, fresh, consistent=True)).entry_count


async def _begin(db: Db, board: LeaderboardItem, at: datetime, grace: timedelta) -> LeaderboardItem:
    if board.ends_at is None:
        raise LeaderboardError(
            ErrorCode.INVALID_ARGUMENT,
            f"leaderboard {board.leaderboard_id!r} has no endsAt: it never closes",
            Subject.LEADERBOARD,
        )
    if at < board.ends_at + grace:
        raise LeaderboardError(
            ErrorCode.INVALID_ARGUMENT,
            f"leaderboard {board.leaderboard_id!r} closes from {stamp(board.ends_at + grace)} "
            f"on ({grace.total_seconds():g} s after its endsAt)",
            Subject.LEADERBOARD,
        )
    await _update_board(
        db,
        board,
        "SET closingSince = :at, closePhase = :phase",
        "attribute_exists(pk) AND attribute_not_exists(closingSince)",
        {":at": stamp(at), ":phase": Phase.COUNTS.value},
    )
    return await _read(db, board.leaderboard_id)


async def _advance(
    db: Db,
    board: LeaderboardItem,
    done: Phase,
    following: Phase,
    *,
    final_count: int | None = None,
    cursor: str | None = None,
) -> LeaderboardItem:
    """Record that step ``done`` is over (once, whichever close gets there first)."""
    assign = ["closePhase = :next"]
    values: dict[str, Any] = {":next": following.value, ":done": done.value}
    if final_count is not None:
        assign.append("finalCount = :count")
        values[":count"] = final_count
    if cursor is not None:
        assign.append("closeCursor = :cursor")
        values[":cursor"] = cursor
    await _update_board(db, board, "SET " + ", ".join(assign), "closePhase = :done", values)
    return await _read(db, board.leaderboard_id)


async def _update_board(
    db: Db, board: LeaderboardItem, update: str, condition: str, values: dict[str, Any]
) -> bool:
    """One conditional UpdateItem of the board's item; False when its condition failed
    (another close got there first: the caller reads the board again)."""
    return await update_when_free(
        db,
        Key=serialize(LEADERBOARD.key_attributes(leaderboard_id=board.leaderboard_id)),
        UpdateExpression=update,
        ConditionExpression=condition,
        ExpressionAttributeValues=serialize(values),
    )


async def _in_turns(calls: Iterable[Callable[[], Awaitable[Any]]]) -> list[Any]:
    """Run the calls, at most _IN_FLIGHT at once."""
    gate = asyncio.Semaphore(_IN_FLIGHT)

    async def run(call: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            return await call()

    return list(await asyncio.gather(*(run(c) for c in calls)))


async def _freeze_counts(db: Db, board: LeaderboardItem) -> None:
    """Step 2: every count shard of the board frozen, created where missing."""

    def freeze(key: dict[str, str], values: dict[str, str]) -> Callable[[], Awaitable[Any]]:
        names = {"#count": "entryCount", **{f"#{k}": k for k in values}}
        assign = ", ".join(f"#{k} = :{k}" for k in values)
        attributes: dict[str, Any] = {":zero": 0, ":true": True}
        attributes.update({f":{k}": v for k, v in values.items()})
        if board.ttl is not None:
            names["#ttl"] = "ttl"
            attributes[":ttl"] = board.ttl
            assign += ", #ttl = :ttl"
        return lambda: update_when_free(
            db,
            Key=serialize(key),
            UpdateExpression=f"SET {assign}, frozen = :true ADD #count :zero",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=serialize(attributes),
        )

    await _in_turns(freeze(key, values) for key, values in count_shard_keys(board))


async def _freeze_entries(db: Db, board: LeaderboardItem, report: Callable[[int], None]) -> None:
    """Step 3: every entry of the board frozen, its guard and then its Score item."""
    for _ in range(_MAX_FREEZE_PASSES):
        found = 0
        for pk in score_partitions(board):
            start: dict[str, str] | None = None
            while True:
                items, start = await query_run(
                    db,
                    key_condition="pk = :pk AND begins_with(sk, :prefix)",
                    values={":pk": pk, ":prefix": SCORE.sk.prefix},
                    limit=RESULT_PAGE,
                    start=start,
                    filter_expression="attribute_not_exists(frozen)",
                    consistent=True,
                )
                await _in_turns(_freeze_entry(db, board, raw) for raw in items)
                found += len(items)
                report(found)
                if start is None:
                    break
        if found == 0:
            return
    raise LeaderboardError(
        ErrorCode.SUBMISSION_CONFLICT,
        f"the entries of {board.leaderboard_id!r} kept changing while they were frozen; "
        "run the close again to go on",
        Subject.LEADERBOARD,
    )


def _freeze_entry(
    db: Db, board: LeaderboardItem, raw: dict[str, Any]
) -> Callable[[], Awaitable[None]]:
    async def freeze() -> None:
        player_id = raw["playerId"]["S"]
        guard = ENTRY_GUARD.key_attributes(player_id=player_id, leaderboard_id=board.leaderboard_id)
        if not await _set_frozen(
            db,
            guard,
            "scoreSk = :sk AND NOT (removed = :true)",
            {":sk": raw["sk"]["S"]},
        ):
            return  # a play moved the entry meanwhile: the next pass finds where it went
        score = {"pk": raw["pk"]["S"], "sk": raw["sk"]["S"]}
        await _set_frozen(db, score, "attribute_exists(pk)", {})

    return freeze


async def _set_frozen(db: Db, key: dict[str, str], condition: str, values: dict[str, Any]) -> bool:
    return await update_when_free(
        db,
        Key=serialize(key),
        UpdateExpression="SET frozen = :true",
        ConditionExpression=condition,
        ExpressionAttributeValues=serialize({":true": True, **values}),
    )


async def _write_results(
    db: Db,
    board: LeaderboardItem,
    at: datetime,
    report: Progress,
    outbox: bool = False,
    started: float = 0.0,
) -> LeaderboardItem:
    """Step 4 from the board's cursor on, then step 5 (with ``outbox`` and entrants, after
    the board's Delivery item is put: a close stopped between the two puts it again, which
    the item's condition makes a no-op)."""
    total = board.final_count or 0
    expires = _results_ttl(board)
    while True:
        cursor = _Cursor.of(board.close_cursor)
        report(_at(board, Phase.RESULTS, cursor.position, total))
        entries, last_sk, more = await top_scores_after(db, board, RESULT_PAGE, cursor.after)
        moved = _Cursor(cursor.after, cursor.position, cursor.rank, cursor.score)
        results: list[ResultItem] = []
        for entry in entries:
            moved.position += 1
            if entry.score != moved.score:
                moved.rank, moved.score = moved.position, entry.score
            results.append(_result(board, entry, moved.position, moved.rank, total, expires))
        moved.after = last_sk if last_sk is not None else cursor.after
        await _put_results(db, results)
        if not more:
            finished = _finished_at(at, started)
            if outbox and total > 0:
                kept = None if expires is None else max(expires, board.ttl or 0)
                await put_delivery(
                    db,
                    leaderboard_id=board.leaderboard_id,
                    total=total,
                    closed_at=finished,
                    ttl=kept,
                )
            await _finish(db, board, finished, expires)
            return await _read(db, board.leaderboard_id)
        await _update_board(
            db,
            board,
            "SET closeCursor = :next",
            "closePhase = :phase AND closeCursor = :was",
            {":next": moved.text(), ":phase": Phase.RESULTS.value, ":was": board.close_cursor},
        )
        board = await _read(db, board.leaderboard_id)
        if board.closed_at is not None:
            return board


def _result(
    board: LeaderboardItem,
    entry: ScoreItem,
    position: int,
    rank: int,
    total: int,
    expires: int | None,
) -> ResultItem:
    assert board.ends_at is not None
    tiers = board.reward_tiers or []
    tier = tier_of(
        tiers,
        rank,
        total,
        entry.score,
        higher_is_better=board.sort_order is SortOrder.DESC,
    )
    reward = tiers[tier] if tier is not None else None
    return ResultItem(
        leaderboard_id=board.leaderboard_id,
        player_id=entry.player_id,
        position=position,
        rank=rank,
        total=total,
        score=entry.score,
        attained_at=entry.attained_at,
        session_id=entry.session_id,
        metadata=entry.metadata,
        ends_at=board.ends_at,
        ttl=expires,
        tier=tier,
        reward_id=reward.reward_id if reward is not None else None,
        reward_quantity=reward.quantity if reward is not None else None,
    )


def _results_ttl(board: LeaderboardItem) -> int | None:
    if board.archive_days is None or board.ends_at is None:
        return None
    return int((board.ends_at + timedelta(days=board.archive_days)).timestamp())


async def _put_results(db: Db, results: Sequence[ResultItem]) -> None:
    chunks = [results[i : i + _BATCH_WRITE] for i in range(0, len(results), _BATCH_WRITE)]
    await _in_turns(_batch_put_call(db, chunk) for chunk in chunks)


def _batch_put_call(db: Db, results: Sequence[ResultItem]) -> Callable[[], Awaitable[None]]:
    return lambda: _batch_put(db, results)


async def _batch_put(db: Db, results: Sequence[ResultItem]) -> None:
    requests: list[Any] = [
        {"PutRequest": {"Item": serialize(RESULT.item(r, **r.index_values()))}} for r in results
    ]
    for round_ in range(_UNPROCESSED_ROUNDS):
        response = await db.client.batch_write_item(RequestItems={db.table: requests})
        requests = list(response.get("UnprocessedItems", {}).get(db.table, []))
        if not requests:
            return
        await asyncio.sleep(min(1.0, 0.05 * 2**round_))
    raise LeaderboardError(
        ErrorCode.BACKEND_UNAVAILABLE,
        "DynamoDB kept throttling the close's writes; run the close again to go on",
    )


def _finished_at(at: datetime, started: float) -> datetime:
    """The time of the close's last write: ``at`` (when the close began) plus the time it took
    since (monotonic), at millisecond precision. A board's ``closedAt`` and its place in the
    CLOSED_BOARDS partition are that time, not its close's start, so that a close taking longer
    than the results feed's SETTLE never enters the feed behind a reader's cursor."""
    finished = at + timedelta(seconds=max(0.0, time.monotonic() - started))
    return finished.replace(microsecond=finished.microsecond // 1000 * 1000)


async def _finish(db: Db, board: LeaderboardItem, at: datetime, expires: int | None) -> None:
    """Step 5: the board FINAL at ``at``, out of the CLOSE_DUE partition, kept as long as its
    results."""
    values: dict[str, Any] = {
        ":at": stamp(at),
        ":phase": Phase.RESULTS.value,
        ":was": board.close_cursor,
    }
    closed_key = close_due(at)
    values[":key"] = closed_key
    values[":gsi2pk"], values[":gsi2sk"] = LEADERBOARD.index_key(
        GSI2, closed_key=closed_key, leaderboard_id=board.leaderboard_id
    )
    closed = "closedAt = :at, closedKey = :key, gsi2pk = :gsi2pk, gsi2sk = :gsi2sk"
    remove = "REMOVE closePhase, closeCursor, closeDue, gsi1pk, gsi1sk"
    if expires is None:
        update = f"SET {closed} {remove}, #ttl"
    else:
        values[":ttl"] = max(expires, board.ttl or 0)
        update = f"SET {closed}, #ttl = :ttl {remove}"
    await update_when_free(
        db,
        Key=serialize(LEADERBOARD.key_attributes(leaderboard_id=board.leaderboard_id)),
        UpdateExpression=update,
        ConditionExpression="closePhase = :phase AND closeCursor = :was",
        ExpressionAttributeNames={"#ttl": "ttl"},
        ExpressionAttributeValues=serialize(values),
    )
