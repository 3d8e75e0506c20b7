"""Score submission: one play recorded in one conditional TransactWriteItems.

Per submission: put the Session, add to the player's stats, and, when the score enters the
board (first entry or strictly better), move the entry guard, delete the old Score item and
put the new one, counting the player into the board's ``entryCount`` on a first entry. The
guard's condition makes a race with another submission of the same player cancel the
transaction instead of losing a better score; a cancelled transaction is retried with a fresh
read a bounded number of times.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from dynamo.entries import EntryItem, entry_key
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.ids import new_session_id, validate_id
from dynamo.leaderboards import LeaderboardItem, board_key
from dynamo.players import PlayerItem, player_key
from dynamo.scores import ScoreItem, rank_value, score_keys
from dynamo.sessions import SessionItem, session_keys
from dynamo.table import Db, batch_get, now, parse, serialize

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb.type_defs import TransactWriteItemTypeDef

__all__ = ["MAX_DURATION_SEC", "Submission", "SubmitResult", "submit_score"]

MAX_ATTEMPTS = 12
MAX_DURATION_SEC = 2_147_483_647
_BACKOFF_BASE = 0.005
_BACKOFF_CAP = 0.25


@dataclass(frozen=True)
class Submission:
    player_id: str
    leaderboard_id: str
    game_id: str
    score: int
    duration_sec: int | None = None


@dataclass(frozen=True)
class SubmitResult:
    session: SessionItem
    entry: ScoreItem
    """The player's entry on the board after this submission (new or unchanged)."""
    improved: bool
    board: LeaderboardItem
    """The board as it is after this submission (its entryCount included)."""
    player: PlayerItem
    """The player with this submission's session counted in."""


def _validate(sub: Submission) -> None:
    validate_id(sub.player_id, "playerId")
    validate_id(sub.leaderboard_id, "leaderboardId")
    validate_id(sub.game_id, "gameId")
    if sub.score < 0:
        raise LeaderboardError(ErrorCode.SCORE_OUT_OF_RANGE, "score must not be negative", "score")
    if sub.duration_sec is not None and not 0 <= sub.duration_sec <= MAX_DURATION_SEC:
        raise LeaderboardError(
            ErrorCode.INVALID_ARGUMENT,
            f"durationSec must be between 0 and {MAX_DURATION_SEC}",
            "durationSec",
        )


class _Retry(Exception):
    """The transaction lost a race; read again and retry."""


async def submit_score(
    db: Db, sub: Submission, *, clock: Callable[[], datetime] = now
) -> SubmitResult:
    """Record one play. Raises LeaderboardError for anything the caller got wrong."""
    _validate(sub)
    session_id = new_session_id()
    at = clock()
    for attempt in range(MAX_ATTEMPTS):
        try:
            return await _attempt(db, sub, session_id, at, attempt)
        except _Retry:
            delay = min(_BACKOFF_CAP, _BACKOFF_BASE * 2**attempt)
            await asyncio.sleep(random.uniform(0, delay))
    raise LeaderboardError(
        ErrorCode.SUBMISSION_CONFLICT,
        "too many concurrent submissions for this player; nothing was recorded, retry later",
    )


async def _attempt(
    db: Db, sub: Submission, session_id: str, at: datetime, attempt: int
) -> SubmitResult:
    pkey, bkey, ekey = (
        player_key(sub.player_id),
        board_key(sub.leaderboard_id),
        entry_key(sub.player_id, sub.leaderboard_id),
    )
    found = await batch_get(db, [pkey, bkey, ekey], consistent=True)
    if pkey not in found:
        raise LeaderboardError(
            ErrorCode.PLAYER_NOT_FOUND, f"no player {sub.player_id!r}", "playerId"
        )
    if bkey not in found:
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_NOT_FOUND,
            f"no leaderboard {sub.leaderboard_id!r}",
            "leaderboardId",
        )
    player = parse(PlayerItem, found[pkey])
    board = parse(LeaderboardItem, found[bkey])
    old = parse(EntryItem, found[ekey]) if ekey in found else None
    if sub.score > board.max_score:
        raise LeaderboardError(
            ErrorCode.SCORE_OUT_OF_RANGE,
            f"score must be between 0 and {board.max_score} on this board",
            "score",
        )
    if not board.is_open(at):
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_CLOSED,
            "the leaderboard is not open at this time",
            "leaderboardId",
        )

    session = SessionItem(
        session_id=session_id,
        player_id=sub.player_id,
        game_id=sub.game_id,
        score=sub.score,
        duration_sec=sub.duration_sec,
        played_at=at,
        leaderboard_id=sub.leaderboard_id,
    )
    candidate = ScoreItem(
        leaderboard_id=sub.leaderboard_id,
        player_id=sub.player_id,
        score=sub.score,
        attained_at=at,
        session_id=session_id,
    )
    improved = old is None or _better(board, candidate.score, old.score)

    roles: list[str] = []
    items: list[TransactWriteItemTypeDef] = []

    def add(role: str, op: Any) -> None:
        roles.append(role)
        items.append(op)

    add("session", _put({**session_keys(session), **session.attributes()}, db.table, new=True))
    add(
        "player",
        {
            "Update": {
                "TableName": db.table,
                "Key": serialize({"pk": pkey[0], "sk": pkey[1]}),
                "UpdateExpression": (
                    "SET updatedAt = :now ADD lifetimeScore :score, gamesPlayed :one"
                ),
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeValues": serialize(
                    {":now": at.isoformat().replace("+00:00", "Z"), ":score": sub.score, ":one": 1}
                ),
            }
        },
    )
    board_pk = serialize({"pk": bkey[0], "sk": bkey[1]})
    if old is None:
        add(
            "board",
            {
                "Update": {
                    "TableName": db.table,
                    "Key": board_pk,
                    "UpdateExpression": "ADD entryCount :one",
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeValues": serialize({":one": 1}),
                }
            },
        )
    else:
        add(
            "board",
            {
                "ConditionCheck": {
                    "TableName": db.table,
                    "Key": board_pk,
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
        )
    entry = candidate
    if improved:
        keys = score_keys(board, candidate)
        guard = EntryItem(
            player_id=sub.player_id,
            leaderboard_id=sub.leaderboard_id,
            score=candidate.score,
            attained_at=at,
            session_id=session_id,
            score_sk=keys["sk"],
        )
        guard_item = {"pk": ekey[0], "sk": ekey[1], **guard.attributes()}
        if old is None:
            add("entry", _put(guard_item, db.table, new=True))
        else:
            add(
                "entry",
                {
                    "Put": {
                        "TableName": db.table,
                        "Item": serialize(guard_item),
                        "ConditionExpression": "scoreSk = :old",
                        "ExpressionAttributeValues": serialize({":old": old.score_sk}),
                    }
                },
            )
            add(
                "old_score",
                {
                    "Delete": {
                        "TableName": db.table,
                        "Key": serialize({"pk": keys["pk"], "sk": old.score_sk}),
                    }
                },
            )
        add("score", _put({**keys, **candidate.attributes()}, db.table, new=True))
    else:
        assert old is not None
        entry = ScoreItem(
            leaderboard_id=sub.leaderboard_id,
            player_id=sub.player_id,
            score=old.score,
            attained_at=old.attained_at,
            session_id=old.session_id,
        )

    try:
        await db.client.transact_write_items(
            TransactItems=items, ClientRequestToken=f"{session_id}-{attempt}"
        )
    except ClientError as error:
        _raise_for_cancellation(error, roles, sub)
        raise
    stats = player.model_copy(
        update={
            "lifetime_score": player.lifetime_score + sub.score,
            "games_played": player.games_played + 1,
            "updated_at": at,
        }
    )
    if old is None:
        board = board.model_copy(update={"entry_count": board.entry_count + 1})
    return SubmitResult(session=session, entry=entry, improved=improved, board=board, player=stats)


def _better(board: LeaderboardItem, new: int, old: int) -> bool:
    width, order = board.score_width, board.sort_order
    return rank_value(new, width, order) > rank_value(old, width, order)


def _put(item: dict[str, Any], table: str, *, new: bool) -> Any:
    put: dict[str, Any] = {"TableName": table, "Item": serialize(item)}
    if new:
        put["ConditionExpression"] = "attribute_not_exists(pk)"
    return {"Put": put}


def _raise_for_cancellation(error: ClientError, roles: list[str], sub: Submission) -> None:
    """Turn a cancelled transaction into a domain error, or _Retry when it lost a race."""
    if error.response["Error"]["Code"] != "TransactionCanceledException":
        return
    reasons = error.response.get("CancellationReasons", [])
    failed = {
        role: reason.get("Code")
        for role, reason in zip(roles, reasons, strict=False)
        if reason.get("Code") not in (None, "None")
    }
    if failed.get("player") == "ConditionalCheckFailed":
        raise LeaderboardError(
            ErrorCode.PLAYER_NOT_FOUND, f"no player {sub.player_id!r}", "playerId"
        ) from None
    if failed.get("board") == "ConditionalCheckFailed":
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_NOT_FOUND,
            f"no leaderboard {sub.leaderboard_id!r}",
            "leaderboardId",
        ) from None
    if not failed or all(
        code in ("ConditionalCheckFailed", "TransactionConflict") for code in failed.values()
    ):
        raise _Retry from None
