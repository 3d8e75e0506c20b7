"""The floor of the mixed workload: each kind of request of :data:`bench.core.load.loadgen.MIX`
issued as the raw aioboto3 calls (and rank-index reads) the service makes for it, without
HTTP, GraphQL, loaders or the service's process.

The calls are those the service's answer to each document sends (its access log's
``dynamodbCallsByOperation``, and the Redis commands it sends), in the same rounds: calls the
service sends together are sent together here. A rank is read from the rank index through
:class:`rankindex.index.RankIndex` (the same Lua script in one pipeline, as the service reads
it). A submission is recorded by the table layer's own :func:`dynamo.play_writes.record_play`
(one consistent BatchGetItem and each board's Query, then one TransactWriteItems: pure
aioboto3, no GraphQL), then each board's new entry is ranked from the index, as the service's
payload asks. A board's Score items are read where its layout keeps them
(:func:`dynamo.scores.score_partitions`): on a write-sharded board, a page and each direction
of a window are one Query per partition, all sent at once (the service sends at most
``MAX_DYNAMODB_IN_FLIGHT`` of one operation's calls at a time) and merged on their sort keys.

:func:`floor_sender` opens the clients one load-generator process shares and returns the
function its clients send with.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any

import aioboto3
from aiobotocore.config import AioConfig
from botocore.exceptions import BotoCoreError, ClientError
from redis.asyncio import Redis
from redis.exceptions import RedisError

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
from bench.core.stack import CREDENTIALS, CURSOR_SECRET, REGION
from bench.core.workload import TOP_N, Variables
from dynamo.cursors import CursorCodec
from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.errors import LeaderboardError
from dynamo.items import parse, serialize
from dynamo.leaderboards import LeaderboardItem
from dynamo.play_writes import record_play
from dynamo.players import PLAYER
from dynamo.plays import Play
from dynamo.ranks import ranks_in_window
from dynamo.scores import (
    SCORE,
    SCORE_RANGE_END,
    ScoreItem,
    rank_value,
    score_partitions,
    score_sk,
)
from dynamo.sessions import SESSION
from dynamo.table import GSI1
from rankindex.index import RankIndex

__all__ = ["AROUND", "INDEX_BEHIND", "FloorCalls", "FloorTarget", "Sender", "floor_sender"]

INDEX_BEHIND = "RANK_INDEX_BEHIND"
"""The error code of raw calls whose rank read the index declined (its projector behind):
the service would have counted in the table instead, which the floor does not model."""
AROUND = 5
"""Entries above and below the player's own in AroundMe (the document's defaults)."""
SESSIONS_PAGE = 10
"""Sessions of a profile page and of the sessions kind (the documents' ``first``)."""

Sender = Callable[[str, Variables], Awaitable[str | None]]
"""Sends one request of a kind with its variables; an error code, or None when it succeeded."""


@dataclass(frozen=True)
class FloorTarget:
    """Where the raw calls go: the DynamoDB endpoint and table, and the rank index's Redis."""

    endpoint_url: str
    table: str
    redis_url: str


def client_config() -> AioConfig:
    """The service's own DynamoDB client settings (retries, pool, no parameter validation)."""
    return AioConfig(
        retries={"mode": "standard", "total_max_attempts": 4},
        max_pool_connections=64,
        parameter_validation=False,
    )


class FloorCalls:
    """The raw calls of each kind of the mix, on one DynamoDB client and one rank index."""

    def __init__(self, db: Db, index: RankIndex) -> None:
        self.db = db
        self.index = index

    async def leaderboard_page(self, v: Variables) -> str | None:
        """The board; the first TOP_N + 1 Score items of each of its partitions (one Query
        each, at once, merged on their sort keys), beside a write-sharded board's count shards
        (the page shows its entryCount); each entry holds its player's name, so no player is
        read. The ranks of a page from the top follow from the page itself."""
        read = await raw_board(self.db, v["leaderboardId"])
        if read is None:
            return "NULL_RESULT"
        board = parse(LeaderboardItem, read)
        counted = asyncio.ensure_future(raw_count_shards(self.db, board))
        pages = await raw_top_pages(self.db, board, TOP_N + 1)
        await counted
        best = merged_items([items_of(page) for page in pages], descending=True)
        list(islice(best, TOP_N))
        return None

    async def profile_page(self, v: Variables) -> str | None:
        """The player and its indexed ranks on every board, together; then its last sessions
        beside the chain of its main entry: the entry, then together the main board and the
        other boards' entries (guards) and boards, then the main entry's rank from the
        index."""
        player_id, board_ids, main = v["playerId"], v["leaderboardIds"], v["mainLeaderboardId"]
        player, ranked = await asyncio.gather(
            raw_get(self.db, PLAYER.key(player_id=player_id)),
            self.index.ranks({b: [(player_id, None)] for b in board_ids}),
        )
        if ranked is None:
            return INDEX_BEHIND
        if player is None:
            return "NULL_RESULT"
        others = [b for b in board_ids if b != main]
        _, ranked_main = await asyncio.gather(
            self._sessions(player_id), self._main_rank(player_id, main, others)
        )
        return None if ranked_main else "NULL_RESULT"

    async def _main_rank(self, player_id: str, main: str, others: list[str]) -> bool:
        """The profile's main entry and its rank, the other boards' entries and boards read
        beside the main board; whether the index ranked it."""
        found = items_of(await self._best(player_id, main))
        if not found:
            return False
        board, *_ = await asyncio.gather(
            raw_board(self.db, main),
            raw_batch_get(
                self.db,
                [ENTRY_GUARD.key(player_id=player_id, leaderboard_id=b) for b in others],
            ),
            *(raw_board(self.db, b) for b in others),
        )
        if board is None:
            return False
        entry, item = parse(ScoreItem, found[0]), parse(LeaderboardItem, board)
        value = rank_value(entry.score, item.score_width, item.sort_order)
        own = await self.index.ranks({main: [(player_id, value)]})
        return bool(own and own.get(main))

    async def around_me(self, v: Variables) -> str | None:
        """The board, the player's entry; the entries above and below it (two Queries
        together); then their ranks from the index (two reads, unless the run starts at the
        top) together with their players and a write-sharded board's count shards (the
        window's total)."""
        board_id, player_id = v["leaderboardId"], v["playerId"]
        read = await raw_board(self.db, board_id)
        found = items_of(await self._best(player_id, board_id))
        if read is None or not found:
            return "NULL_RESULT"
        board, entry = parse(LeaderboardItem, read), parse(ScoreItem, found[0])
        window, from_top = await self._window(board, entry)
        players = [PLAYER.key(player_id=e.player_id) for e in window]
        ranks = asyncio.ensure_future(self._window_ranks(board, window, from_top=from_top))
        await asyncio.gather(
            ranks, raw_batch_get(self.db, players), raw_count_shards(self.db, board)
        )
        return None if ranks.result() else "NULL_RESULT"

    async def sessions(self, v: Variables) -> str | None:
        """The player, then its last sessions."""
        player_id = v["playerId"]
        if await raw_get(self.db, PLAYER.key(player_id=player_id)) is None:
            return "NULL_RESULT"
        await self._sessions(player_id)
        return None

    async def rank(self, v: Variables) -> str | None:
        """The player's indexed rank on the board: one round trip to the index."""
        board_id = v["leaderboardId"]
        found = await self.index.ranks({board_id: [(v["playerId"], None)]})
        answers = (found or {}).get(board_id)
        if found is None:
            return INDEX_BEHIND
        return None if answers and answers[0] is not None else "NULL_RESULT"

    async def submit_score(self, v: Variables) -> str | None:
        """The play recorded by the table layer (BatchGetItem and the boards' Queries,
        TransactWriteItems), then the rank of its entry on each board from the index, the
        boards together."""
        play = Play(
            player_id=v["playerId"],
            game_id=v["gameId"],
            score=v["score"],
            leaderboard_ids=tuple(v["leaderboardIds"]),
            duration_sec=v["durationSec"],
            submission_id=v["submissionId"],
        )
        result = await record_play(self.db, play)
        asks = [(b.leaderboard_id, b.entry, b.board) for b in result.boards if b.board is not None]
        ranked = await asyncio.gather(
            *(
                self.index.ranks(
                    {board_id: [(e.player_id, rank_value(e.score, b.score_width, b.sort_order))]}
                )
                for board_id, e, b in asks
            )
        )
        if any(r is None for r in ranked):
            return INDEX_BEHIND
        every = all(r and r.get(board_id) for r, (board_id, _, _) in zip(ranked, asks, strict=True))
        return None if every and len(asks) == len(play.leaderboard_ids) else "INCOMPLETE_PAYLOAD"

    async def _sessions(self, player_id: str) -> Any:
        return await raw_query(
            self.db,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=serialize(
                {":pk": SESSION.pk.fill(player_id=player_id), ":prefix": SESSION.sk.prefix}
            ),
            ScanIndexForward=False,
            Limit=SESSIONS_PAGE + 1,
        )

    async def _best(self, player_id: str, board_id: str) -> Any:
        """The player's entry on the board (AP4: GSI1, one item)."""
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

    async def _window(
        self, board: LeaderboardItem, entry: ScoreItem
    ) -> tuple[list[ScoreItem], bool]:
        """The entries nearest the player's, above and below: two Queries on each partition
        of the board, all at once, each direction merged on the sort keys."""
        pks = score_partitions(board)
        own = score_sk(board, entry)
        ups = [
            raw_query(
                self.db,
                KeyConditionExpression="pk = :pk AND sk BETWEEN :own AND :end",
                ExpressionAttributeValues=serialize(
                    {":pk": pk, ":own": own, ":end": SCORE_RANGE_END}
                ),
                ScanIndexForward=True,
                Limit=AROUND + 1,
            )
            for pk in pks
        ]
        downs = [
            raw_query(
                self.db,
                KeyConditionExpression="pk = :pk AND sk BETWEEN :start AND :own",
                ExpressionAttributeValues=serialize(
                    {":pk": pk, ":start": SCORE.sk.prefix, ":own": own}
                ),
                ScanIndexForward=False,
                Limit=AROUND + 1,
            )
            for pk in pks
        ]
        pages = await asyncio.gather(*ups, *downs)
        up = merged_items([items_of(page) for page in pages[: len(pks)]], descending=False)
        down = merged_items([items_of(page) for page in pages[len(pks) :]], descending=True)
        above = list(islice((i for i in up if i["sk"]["S"] != own), AROUND))
        below = list(islice((i for i in down if i["sk"]["S"] != own), AROUND))
        better = [parse(ScoreItem, raw) for raw in reversed(above)]
        worse = [parse(ScoreItem, raw) for raw in below]
        return [*better, entry, *worse], len(better) < AROUND

    async def _window_ranks(
        self, board: LeaderboardItem, window: list[ScoreItem], *, from_top: bool
    ) -> list[int]:
        if from_top:
            return ranks_in_window(board, window, better_than_top=0, listed_before=0)
        top = window[0]
        better = await self.index.better_counts(board, [top])
        listed = await self.index.listed_before(board, top)
        if better is None or listed is None:
            return []
        better_than_top = next(iter(better.values()))
        return ranks_in_window(
            board,
            window,
            better_than_top=better_than_top,
            listed_before=max(listed, better_than_top),
        )


def _calls(floor: FloorCalls) -> dict[str, Callable[[Variables], Awaitable[str | None]]]:
    return {
        "leaderboard page": floor.leaderboard_page,
        "profile page": floor.profile_page,
        "around me": floor.around_me,
        "sessions": floor.sessions,
        "rank": floor.rank,
        "submitScore": floor.submit_score,
    }


@asynccontextmanager
async def floor_sender(target: FloorTarget) -> AsyncIterator[Sender]:
    """A DynamoDB client and a Redis client (closed on leaving), and the function that sends
    one kind's raw calls on them: its error code (the DynamoDB or Redis error's, or the
    table layer's), or None."""
    session = aioboto3.Session()
    async with session.client(
        "dynamodb",
        endpoint_url=target.endpoint_url,
        region_name=REGION,
        config=client_config(),
        aws_access_key_id=CREDENTIALS[0],
        aws_secret_access_key=CREDENTIALS[1],
    ) as client:
        redis = Redis.from_url(target.redis_url)
        try:
            db = Db(client=client, table=target.table, cursors=CursorCodec(CURSOR_SECRET))
            calls = _calls(FloorCalls(db, RankIndex(redis, target.table)))

            async def send(kind: str, variables: Variables) -> str | None:
                try:
                    return await calls[kind](variables)
                except LeaderboardError as error:
                    return str(error.code.value)
                except ClientError as error:
                    return str(error.response.get("Error", {}).get("Code") or "ClientError")
                except (BotoCoreError, RedisError, OSError) as error:
                    return type(error).__name__

            yield send
        finally:
            await redis.aclose()
