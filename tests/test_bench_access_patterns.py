"""The access-pattern benchmark's pages of the write-sharded board: the board holds the main
board's players and scores, in the same order, and each page's raw counterpart sends the calls
the service sends for it (the board, one Query per partition, the count shards of each
partition where the page shows the count; the names come with the entries), on a real
DynamoDB Local."""

from __future__ import annotations

import random
from dataclasses import replace

import aiohttp
import pytest

from bench.access_patterns.measure import measure
from bench.access_patterns.operations import (
    SHARDED_ID,
    SHARDED_PAGE_OPERATION,
    SHARDED_PARTITIONS,
    TOP100_SHARDED_OPERATION,
    operations,
    sharded_board,
)
from bench.core.loading import load_boards_with_submissions
from bench.core.report import TOP100_OPERATION
from bench.core.stack import API_KEY, served_app
from bench.core.workload import BOARD_ID, new_boards, plays
from leaderboard.config import Settings
from tests.conftest import PATIENT

PLAYERS = 120
"""More than a page of 100: each partition's Query is cut at its limit."""

TOP = """query($id: ID!) { leaderboard(id: $id) { entryCount topScores(first: 100) {
    edges { node { score player { id } } } } } }"""


@pytest.mark.slow
async def test_the_sharded_board_s_pages_send_the_service_s_calls(
    dynamodb_endpoint: str, settings: Settings
) -> None:
    boards = [*new_boards(), sharded_board()]
    board_plays = [
        replace(p, leaderboard_ids=(*p.leaderboard_ids, SHARDED_ID))
        for p in plays(PLAYERS, random.Random(5), extra_boards=True)
    ]
    async with served_app(dynamodb_endpoint, settings.table, limits=PATIENT) as served:
        loaded = await load_boards_with_submissions(served.db, boards, board_plays)
        by_name = {op.name: op for op in operations(served.db, boards, loaded, PLAYERS)}
        async with aiohttp.ClientSession() as http:
            pages = {}
            for board_id in (BOARD_ID, SHARDED_ID):
                async with http.post(
                    served.url,
                    json={"query": TOP, "variables": {"id": board_id}},
                    headers={"Authorization": f"Bearer {API_KEY}"},
                ) as response:
                    pages[board_id] = (await response.json())["data"]["leaderboard"]
            assert pages[SHARDED_ID] == pages[BOARD_ID]
            assert pages[SHARDED_ID]["entryCount"] == PLAYERS
            assert len(pages[SHARDED_ID]["topScores"]["edges"]) == 100

            sharded_ops = [name for name in by_name if name.endswith(" partitions")]
            assert sharded_ops == [TOP100_SHARDED_OPERATION, SHARDED_PAGE_OPERATION]
            for name in [TOP100_OPERATION, *sharded_ops]:
                result = await measure(
                    by_name[name],
                    http=http,
                    url=served.url,
                    counter=served.counter,
                    rng=random.Random(1),
                    requests=2,
                    warmup=0,
                )
                assert result.samples == 2
                assert result.failures == {}
                queries = 1 + (SHARDED_PARTITIONS if name in sharded_ops else 1)
                if name == SHARDED_PAGE_OPERATION:
                    # The page shows the board's entryCount: its count shards, one Query per
                    # partition.
                    queries += SHARDED_PARTITIONS
                # Each entry holds its player's name: no player is read.
                assert result.calls == f"Query\N{MULTIPLICATION SIGN}{queries}"
                assert result.raw_calls == result.calls
                assert result.call_patterns == {result.calls: 2}
