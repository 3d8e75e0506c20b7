"""The raw aioboto3 counterpart of every benchmarked access pattern.

Each method of :class:`RawCalls` takes the GraphQL variables of a request and sends the
DynamoDB calls that the service sends for it, on the application's own client. The keys of a
board's Score items come from its layout (:func:`dynamo.scores.score_partitions`): on a
write-sharded board a page is one Query per partition, all sent at once and merged on their
sort keys, and a COUNT one per partition, summed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from itertools import islice
from typing import Any

from bench.access_patterns.raw_submit import raw_submit_score
from bench.core.raw_dynamo import (
    items_of,
    merged_items,
    raw_batch_get,
    raw_board,
    raw_count_shards,
    raw_get,
    raw_query,
    raw_top_pages,
)
from bench.core.workload import TOP_N, Variables
from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.items import serialize
from dynamo.leaderboards import LeaderboardItem, SortOrder
from dynamo.players import PLAYER
from dynamo.scores import SCORE, SCORE_RANGE_END, rank_boundary, rank_value, score_partitions
from dynamo.sessions import SESSION
from dynamo.table import GSI1, GSI2

__all__ = ["SCORE_RANGE_END", "RawCalls"]


class RawCalls:
    """The aioboto3 calls of each access pattern, as the service issues them, minus GraphQL,
    HTTP, validation, loaders and item models."""

    def __init__(self, db: Db, boards: Sequence[LeaderboardItem]) -> None:
        self.db = db
        self.board = boards[0]
        """The board submissions play on."""
        self.boards = {b.leaderboard_id: b for b in boards}
        """The benchmark's own copy of every loaded board: the layout of its Score items."""

    async def top_scores(self, v: Variables) -> None:
        """The board; the first TOP_N + 1 Score items of each of its partitions, at once,
        merged on their sort keys (each holds its player's name: no player is read)."""
        await raw_board(self.db, v["id"])
        await self._top_ids(v["id"])

    async def _top_ids(self, board_id: str) -> list[str]:
        """The players of the board's first TOP_N entries: TOP_N + 1 Score items of each of
        its partitions, at once, merged on their sort keys."""
        pages = await raw_top_pages(self.db, self.boards[board_id], TOP_N + 1)
        best = merged_items([items_of(page) for page in pages], descending=True)
        return [item["playerId"]["S"] for item in islice(best, TOP_N)]

    async def player(self, v: Variables) -> None:
        await raw_get(self.db, PLAYER.key(player_id=v["id"]))

    async def player_by_email(self, v: Variables) -> None:
        await raw_query(
            self.db,
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues=serialize(
                {":pk": PLAYER.indexes[GSI1][0].fill(email=v["email"])}
            ),
            Limit=1,
        )

    async def _best(self, player_id: str, board_id: str) -> Any:
        return await raw_query(
            self.db,
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :pk AND gsi1sk = :sk",
            ExpressionAttributeValues=serialize(
                {
                    ":pk": SCORE.indexes[GSI1][0].fill(player_id=player_id),
                    ":sk": SCORE.indexes[GSI1][1].fill(leaderboard_id=board_id),
                }
            ),
            Limit=1,
        )

    async def player_entry(self, v: Variables) -> None:
        await raw_get(self.db, PLAYER.key(player_id=v["id"]))
        await self._best(v["id"], v["board"])

    async def player_scores(self, v: Variables) -> None:
        await raw_get(self.db, PLAYER.key(player_id=v["id"]))
        await raw_query(
            self.db,
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :pk AND begins_with(gsi1sk, :prefix)",
            ExpressionAttributeValues=serialize(
                {":pk": SCORE.indexes[GSI1][0].fill(player_id=v["id"]), ":prefix": SCORE.sk.prefix}
            ),
            ScanIndexForward=True,
            Limit=21,
        )

    async def player_sessions(self, v: Variables) -> None:
        await raw_get(self.db, PLAYER.key(player_id=v["id"]))
        await raw_query(
            self.db,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=serialize(
                {":pk": SESSION.pk.fill(player_id=v["id"]), ":prefix": SESSION.sk.prefix}
            ),
            ScanIndexForward=False,
            Limit=11,
        )

    async def session(self, v: Variables) -> None:
        await raw_get(self.db, SESSION.key(player_id=v["playerId"], session_id=v["sessionId"]))

    async def game_sessions(self, v: Variables) -> None:
        page = await raw_query(
            self.db,
            IndexName=GSI2,
            KeyConditionExpression="gsi2pk = :pk",
            ExpressionAttributeValues=serialize(
                {":pk": SESSION.indexes[GSI2][0].fill(game_id=v["game"])}
            ),
            ScanIndexForward=False,
            Limit=21,
        )
        ids = [item["playerId"]["S"] for item in items_of(page)[:20]]
        await raw_batch_get(self.db, [PLAYER.key(player_id=p) for p in ids])

    async def leaderboard(self, v: Variables) -> None:
        await raw_board(self.db, v["id"])

    async def _count_better(self, board_id: str, own: str) -> int:
        """COUNT of the entries of ``board_id`` with a rank value above ``own``: one COUNT
        Query per partition of the board, at once, each following LastEvaluatedKey to the
        end."""
        counts = await asyncio.gather(
            *(self._count_in(pk, own) for pk in score_partitions(self.boards[board_id]))
        )
        return sum(counts)

    async def _count_in(self, pk: str, own: str) -> int:
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :lo AND :hi",
            "ExpressionAttributeValues": serialize(
                {":pk": pk, ":lo": rank_boundary(own), ":hi": SCORE_RANGE_END}
            ),
            "Select": "COUNT",
        }
        total = 0
        while True:
            response = await raw_query(self.db, **kwargs)
            total += int(response["Count"])
            last = response.get("LastEvaluatedKey")
            if not last:
                return total
            kwargs["ExclusiveStartKey"] = last

    async def rank(self, v: Variables) -> None:
        player_id, board_id = v["id"], v["board"]
        await raw_get(self.db, PLAYER.key(player_id=player_id))
        best, board = await asyncio.gather(
            self._best(player_id, board_id), raw_board(self.db, board_id)
        )
        entry = items_of(best)[0]
        assert board is not None
        await self._count_better(board_id, _rank_value(board, entry))

    async def leaderboard_page(self, v: Variables) -> None:
        """The first page of a board: the same calls as :meth:`top_scores` (the ranks of a
        page from the top follow from the page itself), and beside its Score Queries a
        write-sharded board's count shards, one Query per partition (the page shows its
        entryCount)."""
        board_id = v["leaderboardId"]
        await raw_board(self.db, board_id)
        counted = asyncio.ensure_future(raw_count_shards(self.db, self.boards[board_id]))
        await self._top_ids(board_id)
        await counted

    async def profile_page(self, v: Variables) -> None:
        """The player; then together its entry guards, the boards (the player's standing on
        each board, the main board's best score among them; one Query each) and its last ten
        sessions; then one COUNT per board, concurrently."""
        player_id, board_ids = v["playerId"], v["leaderboardIds"]
        await raw_get(self.db, PLAYER.key(player_id=player_id))
        guards, boards, _ = await asyncio.gather(
            raw_batch_get(
                self.db, [ENTRY_GUARD.key(player_id=player_id, leaderboard_id=b) for b in board_ids]
            ),
            asyncio.gather(*(raw_board(self.db, b) for b in board_ids)),
            raw_query(
                self.db,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues=serialize(
                    {":pk": SESSION.pk.fill(player_id=player_id), ":prefix": SESSION.sk.prefix}
                ),
                ScanIndexForward=False,
                Limit=11,
            ),
        )
        by_id = {b["leaderboardId"]["S"]: b for b in boards if b is not None}
        await asyncio.gather(
            *(
                self._count_better(
                    g["leaderboardId"]["S"], _rank_value(by_id[g["leaderboardId"]["S"]], g)
                )
                for g in guards
            )
        )

    async def submit_score(self, v: Variables) -> None:
        """See :func:`~bench.access_patterns.raw_submit.raw_submit_score`."""
        await raw_submit_score(self.db, self.board, v)


def _rank_value(board: Any, entry: Any) -> str:
    """The rank value of a low-level Score item or entry guard on a low-level board item."""
    return rank_value(
        int(entry["score"]["N"]), int(board["scoreWidth"]["N"]), SortOrder(board["sortOrder"]["S"])
    )
