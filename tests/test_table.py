"""The dynamo layer on large items: paging past DynamoDB's 1 MB and 16 MB response limits."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem, Period, SortOrder, create_leaderboard
from dynamo.players import PLAYER, get_players
from dynamo.ranks import rank_of
from dynamo.reads import batch_get
from dynamo.scores import ScoreItem, score_item, top_scores
from tests.boards import write_items
from tests.conftest import Table, each_layout

T0 = datetime(2026, 11, 1, tzinfo=UTC)


async def _board_with_entries(
    db: Db,
    scores: list[int],
    filler: int,
    order: SortOrder = SortOrder.DESC,
    partitions: int = 1,
) -> tuple[LeaderboardItem, list[ScoreItem]]:
    board = LeaderboardItem(
        leaderboard_id="big",
        name="big",
        period=Period.GLOBAL,
        sort_order=order,
        partitions=partitions,
        created_at=T0,
    )
    await create_leaderboard(db, board)
    entries = [
        ScoreItem(
            leaderboard_id="big",
            player_id=f"p{i:05d}",
            score=s,
            attained_at=T0 + timedelta(milliseconds=i),
            session_id=None,
        )
        for i, s in enumerate(scores)
    ]
    await write_items(
        db,
        [{**score_item(board, e), "filler": "x" * filler} for e in entries],
    )
    return board, entries


@each_layout
@pytest.mark.slow
async def test_rank_count_follows_last_evaluated_key_across_pages(
    table: Table, partitions: int
) -> None:
    rng = random.Random(3)
    scores = [rng.randint(0, 300) for _ in range(1200)]
    # ~3.6 MB
    board, entries = await _board_with_entries(table.db, scores, 3000, partitions=partitions)
    probes = [*rng.sample(entries, 5), min(entries, key=lambda e: e.score)]
    for entry in probes:
        table.counter.reset()
        better = await rank_of(table.db, board, entry) - 1
        assert better == sum(1 for s in scores if s > entry.score)
        if better * 3000 > 2_100_000:
            assert table.counter.snapshot()["Query"] >= 3


@each_layout
async def test_ascending_rank_counts_lower_scores_as_better(table: Table, partitions: int) -> None:
    scores = [50, 10, 30, 10, 70]
    board, entries = await _board_with_entries(
        table.db, scores, 0, order=SortOrder.ASC, partitions=partitions
    )
    assert [await rank_of(table.db, board, e) for e in entries] == [4, 1, 3, 1, 5]


@each_layout
async def test_top_scores_fill_the_page_past_the_one_megabyte_limit(
    table: Table, partitions: int
) -> None:
    scores = list(range(150))
    # 100 items = 2.5 MB
    board, _ = await _board_with_entries(table.db, scores, 25_000, partitions=partitions)
    table.counter.reset()
    page = await top_scores(table.db, board, 100, None)
    assert [e.score for e in page.items] == list(range(149, 49, -1))
    assert page.has_next is True
    assert table.counter.snapshot()["Query"] >= 3
    rest = await top_scores(table.db, board, 100, page.end_cursor)
    assert [e.score for e in rest.items] == list(range(49, -1, -1))
    assert rest.has_next is False


async def test_batch_get_chunks_by_100_keeps_order_and_reports_missing(table: Table) -> None:
    ids = [f"p{i:03d}" for i in range(250)]
    await write_items(
        table.db,
        [
            {
                **PLAYER.key_attributes(player_id=p),
                "playerId": p,
                "name": p,
                "email": f"{p}@x.example",
                "createdAt": "2026-11-01T00:00:00Z",
                "updatedAt": "2026-11-01T00:00:00Z",
            }
            for p in ids[::2]
        ],
    )
    wanted = [*reversed(ids), "p000", "p002"]
    table.counter.reset()
    found = await get_players(table.db, wanted)
    assert table.counter.snapshot() == {"BatchGetItem": 3}
    assert [p.player_id if p else None for p in found] == [
        p if int(p[1:]) % 2 == 0 else None for p in wanted
    ]


async def test_batch_get_retries_unprocessed_keys(table: Table) -> None:
    # 60 items of 350 KB: one BatchGetItem response is capped at 16 MB, so DynamoDB returns
    # part of the keys as UnprocessedKeys and the reader must ask again.
    keys = [LEADERBOARD.key(leaderboard_id=f"blob-{i}") for i in range(60)]
    for pk, sk in keys:
        blob = {"pk": pk, "sk": sk, "blob": "b" * 350_000}
        await table.db.client.put_item(TableName=table.db.table, Item=serialize(blob))
    table.counter.reset()
    found = await batch_get(table.db, keys)
    assert set(found) == set(keys)
    assert table.counter.snapshot()["BatchGetItem"] >= 2


async def test_a_page_cursor_is_bound_to_its_board_and_its_partitions(table: Table) -> None:
    """A write-sharded board's pages resume every partition after the last entry shown; a
    cursor of the same board laid out otherwise, or of another board, is refused."""
    scores = [5, 9, 9, 1, 7, 3, 9, 2]
    sharded, entries = await _board_with_entries(table.db, scores, 0, partitions=4)
    single = sharded.model_copy(update={"partitions": 1})
    other = sharded.model_copy(update={"leaderboard_id": "other"})
    seen: list[tuple[int, str]] = []
    after = None
    table.counter.reset()
    for _ in scores:
        page = await top_scores(table.db, sharded, 3, after)
        seen += [(e.score, e.player_id) for e in page.items]
        if not page.has_next:
            break
        after = page.end_cursor
    # Best first; among equal scores the earlier attained (here, the lower id) first.
    assert seen == sorted(((e.score, e.player_id) for e in entries), key=lambda s: (-s[0], s[1]))
    assert table.counter.snapshot() == {"Query": 4 * 3}
    first = await top_scores(table.db, sharded, 3, None)
    assert first.end_cursor is not None
    for board in (single, other):
        with pytest.raises(LeaderboardError) as refused:
            await top_scores(table.db, board, 3, first.end_cursor)
        assert refused.value.code is ErrorCode.INVALID_CURSOR
    # Its Score items are under its partitions, none under the board's own key.
    alone = await top_scores(table.db, single, 3, None)
    assert alone.items == []
