"""The reads of a write-sharded board: a page or a window asks each partition for its share of
the entries, not for all of them, and stays exactly what a board of one partition answers
(its entries, their order, ties included, its cursors and hasNextPage) whatever the spread of
the entries over the partitions: a partition holding more than its share is read again, alone,
from where it stopped."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import timedelta
from itertools import pairwise
from typing import Any, cast

import aioboto3
import pytest

from bench.capacity.recorder import CapacityRecorder
from bench.capacity.units import tally
from bench.core.sizes import item_size, read_units
from dynamo.items import key
from dynamo.leaderboards import LeaderboardItem, SortOrder, player_hash
from dynamo.merged_reads import allowance
from dynamo.reads import query_items
from dynamo.scores import (
    SCORE,
    ScoreItem,
    score_item,
    score_partition,
    score_partitions,
    score_sk,
    top_scores,
)
from leaderboard.backend import LOCAL_CREDENTIALS
from tests.boards import T0, Entry, write_board, write_items
from tests.conftest import Api

SHARDED = pytest.mark.parametrize("partitions", [4, 8], indirect=True)

PAGE = """query($b: ID!, $first: Int!, $after: String) { leaderboard(id: $b) {
    topScores(first: $first, after: $after) { edges { node { score player { id } } }
    pageInfo { hasNextPage endCursor } } } }"""

AROUND = """query($b: ID!, $p: ID!, $n: Int!) { leaderboard(id: $b) {
    around(playerId: $p, before: $n, after: $n) { rank score { score player { id } } } } }"""


def _shard(player: int, partitions: int) -> int:
    return player_hash(f"p{player:03d}") % partitions


def _best_in(shards: set[int]) -> Callable[[int, int], int]:
    """Scores putting the players ``p<i>`` of ``shards`` (of ``n``) above every other."""
    return lambda i, n: 100_000 + i if _shard(i, n) in shards else i


SPREADS: dict[str, Callable[[int, int], int]] = {
    "the highest all in one partition": _best_in({0}),
    "the highest in two partitions": _best_in({0, 1}),
    "the lowest all in one partition": lambda i, n: i if _shard(i, n) == 0 else 100_000 + i,
    "spread evenly": lambda i, n: (i * 7919) % 1000,
}


@dataclass(frozen=True)
class Twins:
    """The same entries on a board of one partition (``one``) and on one of N (``sharded``)."""

    one: LeaderboardItem
    sharded: LeaderboardItem
    entries: list[Entry]


async def _twins(api: Api, scores: list[int], **fields: Any) -> Twins:
    """Read-only boards: no entry guards; the players written once, with the first."""
    one, entries = await write_board(api.db, "one", scores, guards=False, **fields)
    sharded, _ = await write_board(
        api.db,
        "sharded",
        scores,
        partitions=api.partitions,
        guards=False,
        players=False,
        **fields,
    )
    return Twins(one, sharded, entries)


@dataclass
class Walked:
    pages: list[tuple[list[tuple[str, int]], bool]]
    queries: list[int]
    """The Query calls of each page: the board's, and its entries'."""


async def _walk(api: Api, board_id: str, first: int) -> Walked:
    """Every page of the board, by the cursors of the pages before."""
    walked = Walked([], [])
    after = None
    while True:
        api.reset_calls()
        data = await api.gql(PAGE, {"b": board_id, "first": first, "after": after})
        walked.queries.append(api.calls["Query"])
        page = data["leaderboard"]["topScores"]
        entries = [(e["node"]["player"]["id"], e["node"]["score"]) for e in page["edges"]]
        walked.pages.append((entries, page["pageInfo"]["hasNextPage"]))
        if not page["pageInfo"]["hasNextPage"]:
            return walked
        after = page["pageInfo"]["endCursor"]


def _by_sort_key(board: LeaderboardItem, entries: list[Entry]) -> list[tuple[str, int]]:
    """The entries in the order of their sort keys, descending: the board's order."""

    def sk(e: Entry) -> str:
        entry = ScoreItem(
            leaderboard_id=board.leaderboard_id,
            player_id=e.player_id,
            score=e.score,
            attained_at=e.attained_at,
        )
        return score_sk(board, entry)

    return [(e.player_id, e.score) for e in sorted(entries, key=sk, reverse=True)]


@SHARDED
@pytest.mark.slow
@pytest.mark.parametrize("spread", list(SPREADS))
async def test_pages_are_those_of_a_board_of_one_partition_whatever_the_spread(
    api: Api, spread: str
) -> None:
    n = api.partitions
    twins = await _twins(api, [SPREADS[spread](i, n) for i in range(240)])
    for first in (100, 37):
        sharded = await _walk(api, "sharded", first)

        one = await _walk(api, "one", first)
        assert sharded.pages == one.pages
        in_order = [e for page, _ in sharded.pages for e in page]
        assert in_order == _by_sort_key(twins.one, twins.entries)
        assert len(sharded.pages) == -(-240 // first)
        # Each page is the board's Query and one Query per partition, and a partition read
        # again at most once.
        assert all(1 + n <= q <= 1 + 2 * n for q in sharded.queries)


@SHARDED
async def test_a_partition_holding_more_than_its_share_is_read_again_alone(api: Api) -> None:
    n = api.partitions
    twins = await _twins(
        api, [SPREADS["the highest all in one partition"](i, n) for i in range(240)]
    )
    ordered = _by_sort_key(twins.one, twins.entries)
    first = score_partitions(twins.sharded)[0]
    held = [p for p, _ in ordered if score_partition(twins.sharded, p) == first]
    # Partition 0 holds the best 56 (N = 4) or 27 (N = 8) entries, more than it is asked for
    # (39 or 25): the merge uses its answer up before the page is full.
    assert held == [p for p, _ in ordered[: len(held)]]
    assert len(held) == {4: 56, 8: 27}[n] > allowance(101, n)

    sharded = await _walk(api, "sharded", 100)

    assert sharded.pages == (await _walk(api, "one", 100)).pages
    # The first page: the board, one Query per partition, and partition 0 once more. The
    # pages after it are past partition 0's entries: one Query per partition each.
    assert sharded.queries == [1 + n + 1, 1 + n, 1 + n]


@SHARDED
@pytest.mark.slow
@pytest.mark.parametrize("first", [100, 30])
async def test_ties_across_partitions_keep_the_order_of_their_sort_keys(
    api: Api, first: int
) -> None:
    # 200 players on 4 scores, attained at 3 instants: every group of equal score and instant
    # spans every partition, and is ordered by player id within it, as its sort keys are.
    scores = [(i % 4) * 10 for i in range(200)]
    attained = [T0 + timedelta(minutes=i % 3) for i in range(200)]
    twins = await _twins(api, scores, attained=attained)

    sharded = await _walk(api, "sharded", first)

    expected = _by_sort_key(twins.one, twins.entries)
    assert [e for page, _ in sharded.pages for e in page] == expected
    assert sharded.pages == (await _walk(api, "one", first)).pages
    # Among equal scores the earlier attained come first.
    at = {e.player_id: e.attained_at for e in twins.entries}
    for (p, s), (q, t) in pairwise(expected):
        assert s > t or (s == t and at[p] <= at[q])


@SHARDED
@pytest.mark.slow
@pytest.mark.parametrize(
    "spread", ["the highest all in one partition", "the highest in two partitions"]
)
@pytest.mark.parametrize("order", [SortOrder.DESC, SortOrder.ASC])
async def test_windows_are_those_of_a_board_of_one_partition_whatever_the_spread(
    api: Api, spread: str, order: SortOrder
) -> None:
    n = api.partitions
    twins = await _twins(api, [SPREADS[spread](i, n) for i in range(240)], order=order)
    ordered = _by_sort_key(twins.one, twins.entries)
    for at in (0, 45, 70, 239):
        player = ordered[at][0]
        windows = [
            (await api.gql(AROUND, {"b": board, "p": player, "n": 50}))["leaderboard"]["around"]
            for board in ("sharded", "one")
        ]
        assert windows[0] == windows[1]
        got = [(r["score"]["player"]["id"], r["score"]["score"]) for r in windows[0]]
        assert got == ordered[max(0, at - 50) : at + 51]
        # Every score differs: each entry's rank is its place.
        assert [r["rank"] for r in windows[0]] == list(
            range(max(0, at - 50) + 1, min(240, at + 51) + 1)
        )


# -- what a page costs --------------------------------------------------------------------


@pytest.fixture
async def inspector(dynamodb_endpoint: str) -> AsyncIterator[Any]:
    """A client of its own, for a CapacityRecorder's reads."""
    async with aioboto3.Session().client(
        "dynamodb",
        endpoint_url=dynamodb_endpoint,
        region_name="us-east-1",
        aws_access_key_id=LOCAL_CREDENTIALS[0],
        aws_secret_access_key=LOCAL_CREDENTIALS[1],
    ) as client:
        yield client


@SHARDED
@pytest.mark.slow
async def test_the_top_100_of_evenly_spread_players_is_one_query_per_partition_of_its_share(
    api: Api, inspector: Any
) -> None:
    n = api.partitions
    # Enough players that each partition holds more than 101 of them (the Query of 101 Score
    # items the page is compared with below), ids of four characters.
    players = {4: 520, 8: 1000}[n]
    board, entries = await write_board(
        api.db, "even", [(i * 7919) % 100_000 for i in range(players)], partitions=n, guards=False
    )
    top = _by_sort_key(board, entries)[:101]
    pks = score_partitions(board)
    shares = [sum(1 for p, _ in top if score_partition(board, p) == pk) for pk in pks]
    # The players spread over the partitions as the hash spreads them: no partition holds
    # as many of the top 101 as it is asked for (39 of each of 4, 25 of each of 8).
    assert max(shares) < allowance(101, n) == {4: 39, 8: 25}[n]
    api.reset_calls()
    recorder = CapacityRecorder(api.db.client, inspector, api.db.table)

    data = await api.gql(PAGE, {"b": "even", "first": 100, "after": None})

    page = data["leaderboard"]["topScores"]
    assert [(e["node"]["player"]["id"], e["node"]["score"]) for e in page["edges"]] == top[:100]
    assert page["pageInfo"]["hasNextPage"] is True
    # The board with its count, one Query on each partition (a single round), the players.
    assert api.calls == {"Query": 1 + n, "BatchGetItem": 1}
    asked = [c for c in recorder.take() if c.reads and c.reads[0].partition in pks]
    assert sorted(c.reads[0].partition for c in asked) == pks
    assert {len(c.reads[0].items) for c in asked} == {allowance(101, n)}
    units = tally(asked).total.read
    assert units == sum(c.reported_table for c in asked)
    # What one Query of each partition for first + 1 entries reads: N times 101 Score items.
    whole = [
        await query_items(
            api.db,
            key_condition="pk = :pk AND begins_with(sk, :prefix)",
            values={":pk": pk, ":prefix": SCORE.sk.prefix},
            limit=101,
        )
        for pk in pks
    ]
    assert {len(items) for items in whole} == {101}
    every = sum(read_units(sum(item_size(it) for it in items)) for items in whole)
    # The Score items here are about 168 bytes: the 39 of each of 4 partitions (6.5 KB) or the
    # 25 of each of 8 (4.2 KB) are one unit each (eventually consistent, 4 KB a half), where
    # 101 (17 KB) would be 2.5: 40% of the units.
    assert (units, every) == (n * 1.0, n * 2.5)


# -- a play racing a second read ----------------------------------------------------------


@SHARDED
async def test_an_entry_moved_between_two_reads_of_its_partition_is_shown_once(
    api: Api,
) -> None:
    """A partition read again answers as it stands then: an entry the page took from its
    first answer and meets again, moved below where that answer stopped, is left out."""
    n = api.partitions
    board, entries = await write_board(
        api.db,
        "raced",
        [SPREADS["the highest all in one partition"](i, n) for i in range(240)],
        partitions=n,
        guards=False,
    )
    before = _by_sort_key(board, entries)
    moved = before[2][0]
    entry = next(e for e in entries if e.player_id == moved)
    old = ScoreItem(
        leaderboard_id="raced", player_id=moved, score=entry.score, attained_at=entry.attained_at
    )
    lower = old.model_copy(update={"score": before[80][1] - 1})
    armed = True

    async def move(params: dict[str, Any], **_: Any) -> None:
        """Before the second read of the partition holding the best: the third best entry
        falls to 81st."""
        nonlocal armed
        if armed and "ExclusiveStartKey" in params:
            armed = False
            await write_items(api.db, [score_item(board, lower)])
            await api.db.client.delete_item(
                TableName=api.db.table, Key=key(score_partition(board, moved), score_sk(board, old))
            )

    hook = cast(Any, move)  # aiobotocore awaits a coroutine hook; botocore's types know none
    events = api.db.client.meta.events
    events.register("before-parameter-build.dynamodb.Query", hook)
    try:
        page = await top_scores(api.db, board, 100, None)
    finally:
        events.unregister("before-parameter-build.dynamodb.Query", hook)

    assert not armed
    shown = [(e.player_id, e.score) for e in page.items]
    # Once, where the first answer had it; the page is the board as it stood at that answer.
    assert [p for p, _ in shown].count(moved) == 1
    assert shown == before[:100]
    assert page.has_next is True
