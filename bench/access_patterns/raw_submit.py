"""The raw counterpart of submitScore: the consistent reads and the TransactWriteItems that
submit_score sends, issued directly with aioboto3."""

from __future__ import annotations

import asyncio
from typing import Any

from bench.core.items import guard_item, score_item, session_item
from bench.core.raw_dynamo import raw_batch_get, raw_board, raw_key
from bench.core.workload import Variables
from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.ids import new_session_id
from dynamo.items import now, serialize
from dynamo.leaderboards import LeaderboardItem, Operator, count_change
from dynamo.players import PLAYER
from dynamo.plays import Play, play_session
from dynamo.scores import ScoreItem, rank_value, score_partition, score_sk

__all__ = ["raw_submit_score"]


async def raw_submit_score(db: Db, board: LeaderboardItem, v: Variables) -> None:
    """One consistent BatchGetItem of player and entry guard beside the board's consistent
    Query, then the same TransactWriteItems that submit_score sends for a play on one board
    (the board's key codec, partitions and operator are fixed at creation, so the benchmark's
    own copy of the board encodes the Score key, in the player's partition of a write-sharded
    board; the benchmark's board keeps each player's best score)."""
    if board.operator is not Operator.BEST or board.family_id is not None:
        raise ValueError("raw_submit_score plays on a plain BEST board only")
    i = v["i"]
    sub = Play(
        player_id=i["playerId"],
        game_id=i["gameId"],
        score=i["score"],
        leaderboard_ids=(i["leaderboardId"],),
        duration_sec=i["durationSec"],
    )
    board_id = board.leaderboard_id
    if sub.leaderboard_ids != (board_id,):
        raise ValueError(f"raw_submit_score plays on {board_id!r} only: {sub}")
    pkey, ekey = (
        PLAYER.key(player_id=sub.player_id),
        ENTRY_GUARD.key(player_id=sub.player_id, leaderboard_id=board_id),
    )
    read, _ = await asyncio.gather(
        raw_batch_get(db, [pkey, ekey], consistent=True),
        raw_board(db, board_id, consistent=True),
    )
    found = {(raw["pk"]["S"], raw["sk"]["S"]): raw for raw in read}
    table = db.table
    old = found.get(ekey)
    at, session_id = now(), new_session_id()
    session = play_session(sub, session_id, at, list(sub.leaderboard_ids))
    entry = ScoreItem(
        leaderboard_id=board_id,
        player_id=sub.player_id,
        score=sub.score,
        attained_at=at,
        session_id=session_id,
        ttl=board.ttl,
        player_name=found[pkey]["name"]["S"] if pkey in found else None,
    )
    width, order = board.score_width, board.sort_order
    improved = old is None or rank_value(sub.score, width, order) > rank_value(
        int(old["score"]["N"]), width, order
    )
    new_only = "attribute_not_exists(pk)"
    ops: list[Any] = [
        {
            "Put": {
                "TableName": table,
                "Item": serialize(session_item(session)),
                "ConditionExpression": new_only,
            }
        },
        {
            "Update": {
                "TableName": table,
                "Key": raw_key(pkey),
                "UpdateExpression": (
                    "SET updatedAt = :now ADD lifetimeScore :score, gamesPlayed :one"
                ),
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeValues": serialize(
                    {
                        ":now": at.isoformat().replace("+00:00", "Z"),
                        ":score": sub.score,
                        ":one": 1,
                    }
                ),
            }
        },
    ]
    if old is None:
        ops.append(
            count_change(
                table, board_id, sub.player_id, 1, partitions=board.partitions, ttl=board.ttl
            )
        )
    if improved:
        guard: dict[str, Any] = {
            "TableName": table,
            "Item": serialize(guard_item(board, entry)),
            "ConditionExpression": new_only,
        }
        if old is not None:
            guard["ConditionExpression"] = "scoreSk = :old"
            guard["ExpressionAttributeValues"] = {":old": old["scoreSk"]}
        ops.append({"Put": guard})
        if old is not None and old["scoreSk"]["S"] != score_sk(board, entry):
            old_key = raw_key((score_partition(board, sub.player_id), old["scoreSk"]["S"]))
            ops.append({"Delete": {"TableName": table, "Key": old_key}})
        ops.append({"Put": {"TableName": table, "Item": serialize(score_item(board, entry))}})
    elif old is not None:
        # The entry stays: on condition that it still stands as read.
        check = {
            "TableName": table,
            "Key": raw_key(ekey),
            "ConditionExpression": "scoreSk = :old",
            "ExpressionAttributeValues": {":old": old["scoreSk"]},
        }
        ops.append({"ConditionCheck": check})
    await db.client.transact_write_items(TransactItems=ops, ClientRequestToken=f"{session_id}-0")
