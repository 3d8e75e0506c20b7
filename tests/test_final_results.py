"""Final standings through the API: a board's status, its final standings and a player's
results once its close (dynamo/closing.py) has written them, on both layouts."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from dynamo.closing import close_board
from tests.boards import T0, oracle, write_board
from tests.conftest import Api, each_layout

END = T0 + timedelta(days=1)
AFTER = END + timedelta(minutes=5)
"""When the tests close a board that ends at END: past the close's grace."""

SCORES = [50, 70, 70, 10, 50, 90, 70, 30, 50, 50, 20, 70, 90]
"""Ties at 90, 70 and 50: p005 and p012 share rank 1, p001, p002, p006 and p011 rank 3."""

BOARD = """query($b: ID!) { leaderboard(id: $b) { status closedAt archiveDays endsAt expiresAt
    finalStandings { edges { cursor } pageInfo { hasNextPage endCursor } } } }"""
STANDINGS = """query($b: ID!, $first: Int, $after: String) { leaderboard(id: $b) {
    finalStandings(first: $first, after: $after) {
      edges { cursor node { position rank total percentile score attainedAt sessionId metadata
        player { id name } leaderboard { id status } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }"""
RESULT = """query($b: ID!, $p: ID!) { leaderboard(id: $b) { finalResult(playerId: $p) {
    position rank total percentile score player { id } leaderboard { id } } } }"""
RESULTS = """query($p: ID!, $first: Int, $after: String) { player(id: $p) {
    results(first: $first, after: $after) {
      edges { cursor node { leaderboard { id endsAt status } position rank total score } }
      pageInfo { hasNextPage endCursor } } } }"""


def _percentile(rank: int, total: int) -> float:
    return 100.0 * (total - (rank - 1)) / total


async def _board(api: Api, board_id: str) -> dict[str, Any]:
    data = await api.gql(BOARD, {"b": board_id})
    board: dict[str, Any] = data["leaderboard"]
    return board


async def _standings(
    api: Api, board_id: str, first: int | None = None, after: str | None = None
) -> dict[str, Any]:
    data = await api.gql(STANDINGS, {"b": board_id, "first": first, "after": after})
    page: dict[str, Any] = data["leaderboard"]["finalStandings"]
    return page


async def _all_standings(api: Api, board_id: str, first: int) -> list[dict[str, Any]]:
    """Every result of the board's final standings, ``first`` a page, each page resuming at
    the one before's endCursor."""
    found: list[dict[str, Any]] = []
    after = None
    while True:
        page = await _standings(api, board_id, first, after)
        found += [e["node"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            return found
        assert len(page["edges"]) == first
        after = page["pageInfo"]["endCursor"]


async def test_a_board_is_live_then_closing_then_final(api: Api) -> None:
    api.clock.set(T0)
    await api.create_player("ann")
    await api.create_player("bob")
    await api.create_board("season", endsAt=END.isoformat(), archiveDays=30)
    await api.submit("ann", "season", 10)
    await api.submit("bob", "season", 20)

    live = await _board(api, "season")
    assert live["status"] == "LIVE"
    assert live["closedAt"] is None
    assert live["archiveDays"] == 30
    assert live["expiresAt"] is None
    assert live["finalStandings"] == {
        "edges": [],
        "pageInfo": {"hasNextPage": False, "endCursor": None},
    }

    # From endsAt on, before any close: CLOSING, and still no final standings.
    api.clock.set(END)
    closing = await _board(api, "season")
    assert closing["status"] == "CLOSING"
    assert closing["closedAt"] is None
    assert closing["finalStandings"]["edges"] == []
    data = await api.gql(RESULT, {"b": "season", "p": "ann"})
    assert data["leaderboard"]["finalResult"] is None
    refused = await api.submit("ann", "season", 99)
    assert [e["code"] for e in refused["errors"]] == ["LEADERBOARD_CLOSED"]

    await close_board(api.db, "season", at=AFTER)
    api.clock.set(AFTER)
    final = await _board(api, "season")
    assert final["status"] == "FINAL"
    # closed when the close's last write was made: its ``at`` and the time it took
    closed_at = datetime.fromisoformat(final["closedAt"])
    assert AFTER <= closed_at < AFTER + timedelta(minutes=5)
    # The board is kept as long as its results: archiveDays after its end.
    assert final["expiresAt"] == (END + timedelta(days=30)).isoformat()
    standings = await _standings(api, "season")
    assert [
        (e["node"]["player"]["id"], e["node"]["position"], e["node"]["rank"], e["node"]["score"])
        for e in standings["edges"]
    ] == [("bob", 1, 1, 20), ("ann", 2, 2, 10)]
    assert all(e["node"]["sessionId"] is not None for e in standings["edges"])
    assert standings["edges"][0]["node"]["leaderboard"] == {"id": "season", "status": "FINAL"}


@each_layout
async def test_final_standings_page_in_the_boards_order(api: Api, partitions: int) -> None:
    board, entries = await write_board(api.db, "season", SCORES, partitions=partitions, ends_at=END)
    await close_board(api.db, "season", at=AFTER)
    api.clock.set(AFTER)
    total = len(SCORES)
    expected = [
        {
            "position": position,
            "rank": rank,
            "total": total,
            "percentile": _percentile(rank, total),
            "score": score,
            "attainedAt": (T0 + timedelta(seconds=int(player[1:]))).isoformat(),
            "sessionId": None,
            "metadata": None,
            "player": {"id": player, "name": f"Player {player}"},
            "leaderboard": {"id": "season", "status": "FINAL"},
        }
        for position, (player, score, rank) in enumerate(oracle(board, entries), start=1)
    ]
    for first in (1, 4, 5, 13, 20):
        assert await _all_standings(api, "season", first) == expected, first
    found = await _all_standings(api, "season", 5)
    # Ties share a rank; positions run 1 to total with no gap; ties in attainment order.
    assert [r["rank"] for r in found] == [1, 1, 3, 3, 3, 3, 7, 7, 7, 7, 11, 12, 13]
    assert [r["position"] for r in found] == list(range(1, total + 1))
    assert [r["player"]["id"] for r in found[:6]] == [
        "p005",
        "p012",
        "p001",
        "p002",
        "p006",
        "p011",
    ]

    # Any edge's cursor resumes right after it; the last page says no more follow.
    page = await _standings(api, "season", 5)
    assert page["pageInfo"]["hasNextPage"] is True
    assert page["pageInfo"]["hasPreviousPage"] is False
    assert page["pageInfo"]["startCursor"] == page["edges"][0]["cursor"]
    assert page["pageInfo"]["endCursor"] == page["edges"][-1]["cursor"]
    resumed = await _standings(api, "season", 3, page["edges"][2]["cursor"])
    assert [e["node"]["position"] for e in resumed["edges"]] == [4, 5, 6]
    last = await _standings(api, "season", 20, page["edges"][-1]["cursor"])
    assert [e["node"]["position"] for e in last["edges"]] == list(range(6, total + 1))
    assert last["pageInfo"]["hasNextPage"] is False
    empty = await _standings(api, "season", 0)
    assert empty["edges"] == []
    assert empty["pageInfo"]["hasNextPage"] is True


@each_layout
async def test_final_result_of_an_entrant_and_of_anyone_else(api: Api, partitions: int) -> None:
    await write_board(api.db, "season", SCORES, partitions=partitions, ends_at=END)
    await write_board(api.db, "running", SCORES, partitions=partitions, ends_at=END, players=False)
    await write_board(api.db, "forever", SCORES, partitions=partitions, players=False)
    await api.create_player("zed")
    await close_board(api.db, "season", at=AFTER)
    api.clock.set(AFTER)

    data = await api.gql(RESULT, {"b": "season", "p": "p006"})
    assert data["leaderboard"]["finalResult"] == {
        "position": 5,
        "rank": 3,
        "total": len(SCORES),
        "percentile": _percentile(3, len(SCORES)),
        "score": 70,
        "player": {"id": "p006"},
        "leaderboard": {"id": "season"},
    }
    # A player with no entry on the board has no result.
    data = await api.gql(RESULT, {"b": "season", "p": "zed"})
    assert data["leaderboard"]["finalResult"] is None
    # Nor has an entrant of a board that is not FINAL: CLOSING, or LIVE with no end.
    for board_id, status in (("running", "CLOSING"), ("forever", "LIVE")):
        data = await api.gql(RESULT, {"b": board_id, "p": "p006"})
        assert data["leaderboard"]["finalResult"] is None
        assert (await _board(api, board_id))["status"] == status
        assert (await _standings(api, board_id))["edges"] == []


async def test_a_players_results_are_newest_first_across_boards(api: Api) -> None:
    ends = {"s1": END, "s2": END + timedelta(days=7), "s3": END + timedelta(days=14)}
    scores = {"s1": [10, 20, 30], "s2": [30, 20, 10], "s3": [5, 5, 50]}
    for i, (board_id, ends_at) in enumerate(ends.items()):
        await write_board(api.db, board_id, scores[board_id], ends_at=ends_at, players=i == 0)
    await write_board(api.db, "live", [1, 2, 3], ends_at=AFTER + timedelta(days=30), players=False)
    late = ends["s3"] + timedelta(minutes=5)
    for board_id in ends:
        await close_board(api.db, board_id, at=late)
    api.clock.set(late)

    data = await api.gql(RESULTS, {"p": "p001", "first": 2})
    page = data["player"]["results"]
    assert [
        (e["node"]["leaderboard"]["id"], e["node"]["position"], e["node"]["rank"])
        for e in page["edges"]
    ] == [("s3", 3, 2), ("s2", 2, 2)]
    assert page["edges"][0]["node"]["leaderboard"]["endsAt"] == ends["s3"].isoformat()
    assert page["edges"][0]["node"]["leaderboard"]["status"] == "FINAL"
    assert page["pageInfo"]["hasNextPage"] is True
    data = await api.gql(RESULTS, {"p": "p001", "first": 2, "after": page["pageInfo"]["endCursor"]})
    rest = data["player"]["results"]
    assert [(e["node"]["leaderboard"]["id"], e["node"]["score"]) for e in rest["edges"]] == [
        ("s1", 20)
    ]
    assert rest["pageInfo"]["hasNextPage"] is False
    # Ties: p000 and p001 share rank 2 on s3, p000 listed first (the earlier attainment).
    data = await api.gql(RESULTS, {"p": "p000"})
    assert [
        (e["node"]["leaderboard"]["id"], e["node"]["position"], e["node"]["rank"])
        for e in data["player"]["results"]["edges"]
    ] == [("s3", 2, 2), ("s2", 1, 1), ("s1", 3, 3)]
    # The cursor of one player's results is not another's.
    other = await api.raw(RESULTS, {"p": "p000", "after": page["pageInfo"]["endCursor"]})
    assert [e["extensions"]["code"] for e in other["errors"]] == ["INVALID_CURSOR"]


async def test_archive_days_round_trip_and_are_checked(api: Api) -> None:
    created = await api.gql(
        """mutation { a: createLeaderboard(input: {id: "a", name: "a", period: SEASON,
            endsAt: "2026-12-01T00:00:00Z", archiveDays: 365}) {
            leaderboard { archiveDays } errors { code } }
          b: createLeaderboard(input: {id: "b", name: "b", period: GLOBAL}) {
            leaderboard { archiveDays status } errors { code } } }"""
    )
    assert created["a"] == {"leaderboard": {"archiveDays": 365}, "errors": []}
    assert created["b"] == {"leaderboard": {"archiveDays": None, "status": "LIVE"}, "errors": []}
    assert (await _board(api, "a"))["archiveDays"] == 365
    family = await api.gql(
        """mutation { createLeaderboardFamily(input: {id: "duel", name: "Duel", period: DAILY,
            archiveDays: 0}) { family { archiveDays } errors { code } } }"""
    )
    assert family["createLeaderboardFamily"] == {"family": {"archiveDays": 0}, "errors": []}
    data = await api.gql(
        '{ leaderboardFamily(id: "duel") { archiveDays current { archiveDays status } } }'
    )
    assert data["leaderboardFamily"] == {
        "archiveDays": 0,
        "current": {"archiveDays": 0, "status": "LIVE"},
    }
    for days in (-1, 3651):
        refused = await api.gql(
            """mutation($d: Int) {
              board: createLeaderboard(input: {id: "c", name: "c", period: GLOBAL,
                archiveDays: $d}) { leaderboard { id } errors { code field } }
              family: createLeaderboardFamily(input: {id: "f", name: "f", period: DAILY,
                archiveDays: $d}) { family { id } errors { code field } } }""",
            {"d": days},
        )
        assert refused["board"] == {
            "leaderboard": None,
            "errors": [{"code": "INVALID_ARGUMENT", "field": "archiveDays"}],
        }
        assert refused["family"] == {
            "family": None,
            "errors": [{"code": "INVALID_ARGUMENT", "field": "archiveDays"}],
        }
    gone = await api.raw('{ c: leaderboard(id: "c") { id } f: leaderboardFamily(id: "f") { id } }')
    assert gone["data"] == {"c": None, "f": None}


@each_layout
async def test_bad_cursors_and_sizes_are_refused(api: Api, partitions: int) -> None:
    await write_board(api.db, "season", SCORES, partitions=partitions, ends_at=END)
    await write_board(api.db, "other", SCORES, partitions=partitions, ends_at=END, players=False)
    await write_board(api.db, "open", SCORES, partitions=partitions, players=False)
    for board_id in ("season", "other"):
        await close_board(api.db, board_id, at=AFTER)
    api.clock.set(AFTER)
    cursor = (await _standings(api, "season", 2))["pageInfo"]["endCursor"]
    top = await api.gql(
        '{ leaderboard(id: "open") { topScores(first: 2) { pageInfo { endCursor } } } }'
    )
    top_cursor = top["leaderboard"]["topScores"]["pageInfo"]["endCursor"]
    cases = [
        ("season", "garbage"),
        ("season", cursor + "x"),
        ("season", top_cursor),  # a cursor of another list (a live board's entries)
        ("other", cursor),  # a cursor of another board's standings
        ("open", cursor),  # a board that is not final has no cursor yet
    ]
    for board_id, after in cases:
        body = await api.raw(STANDINGS, {"b": board_id, "first": 2, "after": after})
        assert [e["extensions"]["code"] for e in body["errors"]] == ["INVALID_CURSOR"], after
        assert body["data"] == {"leaderboard": None}
    for board_id, first in (("season", 101), ("season", -1), ("open", 101)):
        body = await api.raw(STANDINGS, {"b": board_id, "first": first})
        assert [e["extensions"]["code"] for e in body["errors"]] == ["INVALID_ARGUMENT"]
    body = await api.raw(RESULT, {"b": "season", "p": "a#b"})
    assert [e["extensions"]["code"] for e in body["errors"]] == ["INVALID_ID"]


@each_layout
async def test_a_page_of_final_standings_and_a_final_result_cost_few_calls(
    api: Api, partitions: int
) -> None:
    await write_board(api.db, "season", SCORES, partitions=partitions, ends_at=END)
    await close_board(api.db, "season", at=AFTER)
    api.clock.set(AFTER)

    api.reset_calls()
    page = await _standings(api, "season", 10)
    assert len(page["edges"]) == 10
    # The board's Query (a write-sharded board's count is not asked for), one Query of the
    # standings whatever the board's partitions, and the players of the page in one batch.
    assert api.calls == {"Query": 2, "BatchGetItem": 1}

    api.reset_calls()
    data = await api.gql(
        '{ leaderboard(id: "season") { finalResult(playerId: "p003") { position total } } }'
    )
    assert data["leaderboard"]["finalResult"] == {"position": len(SCORES), "total": len(SCORES)}
    # The board's Query and the result's GetItem.
    assert api.calls == {"Query": 1, "GetItem": 1}

    api.reset_calls()
    data = await api.gql(
        '{ player(id: "p003") { results(first: 10) { edges { node { rank total } } } } }'
    )
    assert data["player"]["results"]["edges"] == [
        {"node": {"rank": len(SCORES), "total": len(SCORES)}}
    ]
    # The player's GetItem and one Query of its results.
    assert api.calls == {"GetItem": 1, "Query": 1}
