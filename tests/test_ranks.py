"""Ranks in context: around-me, page ranks, friends boards, several boards, percentiles."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynamo.leaderboards import SortOrder
from dynamo.ranks import window_ranks
from dynamo.scores import ScoreItem
from tests.boards import oracle, write_board
from tests.conftest import Api, each_layout

AROUND = """query($b: ID!, $p: ID!, $before: Int!, $after: Int!) { leaderboard(id: $b) {
    around(playerId: $p, before: $before, after: $after) {
      rank total percentile score { score player { id } } } } }"""


@each_layout
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    scores=st.lists(st.integers(0, 4), min_size=1, max_size=25),
    order=st.sampled_from([SortOrder.DESC, SortOrder.ASC]),
    probe=st.integers(0, 24),
    before=st.integers(0, 6),
    after=st.integers(0, 6),
)
async def test_around_me_matches_a_brute_force_oracle(
    api: Api, scores: list[int], order: SortOrder, probe: int, before: int, after: int
) -> None:
    board_id = f"b-{uuid.uuid4().hex[:10]}"
    board, entries = await write_board(api.db, board_id, scores, order, partitions=api.partitions)
    expected = oracle(board, entries)
    player = entries[probe % len(entries)].player_id
    at = next(i for i, (p, _, _) in enumerate(expected) if p == player)

    data = await api.gql(AROUND, {"b": board_id, "p": player, "before": before, "after": after})

    window = data["leaderboard"]["around"]
    got = [(r["score"]["player"]["id"], r["score"]["score"], r["rank"]) for r in window]
    assert got == expected[max(0, at - before) : at + after + 1]
    assert {r["total"] for r in window} == {len(entries)}
    for r in window:
        assert r["percentile"] == 100 * (len(entries) - r["rank"] + 1) / len(entries)


@each_layout
async def test_around_edges_alone_absent_and_limits(api: Api) -> None:
    await write_board(api.db, "solo", [7], partitions=api.partitions)
    await write_board(api.db, "many", [5, 5, 5, 9, 1], partitions=api.partitions)
    data = await api.gql(
        """{ solo: leaderboard(id: "solo") { around(playerId: "p000") { rank score { score } } }
             absent: leaderboard(id: "solo") { around(playerId: "nobody") { rank } }
             top: leaderboard(id: "many") { around(playerId: "p003", before: 3, after: 1) {
               rank score { player { id } } } }
             last: leaderboard(id: "many") { around(playerId: "p004", before: 2, after: 3) {
               rank score { player { id } } } } }"""
    )
    assert data["solo"]["around"] == [{"rank": 1, "score": {"score": 7}}]
    assert data["absent"]["around"] is None
    assert [(r["score"]["player"]["id"], r["rank"]) for r in data["top"]["around"]] == [
        ("p003", 1),
        ("p000", 2),
    ]
    assert [(r["score"]["player"]["id"], r["rank"]) for r in data["last"]["around"]] == [
        ("p001", 2),
        ("p002", 2),
        ("p004", 5),
    ]
    too_wide = await api.raw(
        '{ leaderboard(id: "many") { around(playerId: "p000", before: 51) { rank } } }'
    )
    assert too_wide["errors"][0]["extensions"] == {"code": "INVALID_ARGUMENT", "field": "before"}


@each_layout
async def test_page_ranks_follow_ties_across_page_boundaries(api: Api) -> None:
    scores = [3, 3, 3, 2, 2, 2, 2, 1, 1, 3, 0, 2]
    board, entries = await write_board(api.db, "paged", scores, partitions=api.partitions)
    expected = oracle(board, entries)
    query = """query($after: String) { leaderboard(id: "paged") {
        topScores(first: 4, after: $after) { edges { node { rank player { id } } }
        pageInfo { hasNextPage endCursor } } } }"""
    got, after = [], None
    api.reset_calls()
    while True:
        page = (await api.gql(query, {"after": after}))["leaderboard"]["topScores"]
        got += [(e["node"]["player"]["id"], e["node"]["rank"]) for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert got == [(p, r) for p, _, r in expected]
    # Per page: the board with its count (Query), the page (a Query per partition) and its
    # players (BatchGetItem); the ranks of the first page cost nothing, those of each later
    # page two COUNTs (a Query per partition each).
    n = api.partitions
    assert api.calls == {"Query": 3 + 3 * n + 2 * 2 * n, "BatchGetItem": 3}


@each_layout
async def test_friends_board_and_ranks_on_several_boards(api: Api) -> None:
    await write_board(api.db, "a", [10, 20, 20, 5, 30, 20], partitions=api.partitions)
    await write_board(api.db, "b", [1, 2], SortOrder.ASC, partitions=api.partitions)
    api.reset_calls()
    data = await api.gql(
        """{ leaderboard(id: "a") {
               ranksOf(playerIds: ["p003", "p001", "nobody", "p002", "p001"]) {
                 rank total score { score player { id } } } }
             player(id: "p001") { ranks(leaderboardIds: ["a", "b", "zzz"]) { rank total } }
             players(ids: ["p004", "ghost", "p000"]) { id name } }"""
    )
    friends = data["leaderboard"]["ranksOf"]
    assert [(f["score"]["player"]["id"], f["rank"]) for f in friends] == [
        ("p001", 2),
        ("p002", 2),
        ("p003", 6),
    ]
    assert {f["total"] for f in friends} == {6}
    assert data["player"]["ranks"] == [{"rank": 2, "total": 6}, {"rank": 2, "total": 2}, None]
    assert data["players"] == [
        {"id": "p004", "name": "Player p004"},
        None,
        {"id": "p000", "name": "Player p000"},
    ]
    too_many = await api.raw(
        "query($ids: [ID!]!) { players(ids: $ids) { id } }",
        {"ids": [f"p{i}" for i in range(101)]},
    )
    assert too_many["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"


async def test_players_by_ids_is_one_batch_get_per_hundred(api: Api) -> None:
    await write_board(api.db, "big", list(range(120)), partitions=api.partitions)
    ids = [f"p{i:03d}" for i in range(100)]
    api.reset_calls()
    data = await api.gql("query($ids: [ID!]!) { players(ids: $ids) { id } }", {"ids": ids})
    assert [p["id"] for p in data["players"]] == ids
    assert api.calls == {"BatchGetItem": 1}


@each_layout
async def test_page_ranks_rise_with_the_scores_when_the_first_entry_moved_meanwhile(
    api: Api,
) -> None:
    """A page read just before its first entry's player played again: the counts no longer
    find that entry, and the ranks still rise with the scores (here exactly as the board
    stands: a and b above the moved entry's old score, c below)."""
    board, entries = await write_board(
        api.db, "moved", [50, 40, 30], SortOrder.DESC, partitions=api.partitions
    )
    stored = [
        ScoreItem(
            leaderboard_id="moved", player_id=e.player_id, score=e.score, attained_at=e.attained_at
        )
        for e in entries
    ]
    moved = stored[2].model_copy(update={"player_id": "moved", "score": 45})
    assert await window_ranks(api.db, board, [moved, stored[2]], from_top=False) == [2, 3]
