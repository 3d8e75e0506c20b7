"""Score bounds: a board's or family's minScore and maxScore, and the plays they refuse."""

from __future__ import annotations

from typing import Any

import pytest

from dynamo.entry_guards import ENTRY_GUARD
from dynamo.families import FAMILY
from dynamo.leaderboards import LEADERBOARD
from dynamo.scores import SCORE
from dynamo.sessions import SESSION
from tests.conftest import Api
from tests.scan import scan_items

DAY = "2026-11-21T10:00:00+00:00"

CREATE_BOARD = """mutation($i: CreateLeaderboardInput!) { createLeaderboard(input: $i) {
    leaderboard { id minScore maxScore } errors { code message field } } }"""

CREATE_FAMILY = """mutation($i: CreateLeaderboardFamilyInput!) {
    createLeaderboardFamily(input: $i) {
      family { id minScore maxScore current { id minScore maxScore } }
      errors { code message field } } }"""

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    entries { leaderboardId score { score } }
    errors { code message field } } }"""

BOARD = """query($id: ID!) { leaderboard(id: $id) {
    minScore maxScore entryCount topScores { edges { node { score } } } } }"""


async def _create_board(api: Api, board_id: str, **fields: Any) -> dict[str, Any]:
    data = await api.gql(
        CREATE_BOARD, {"i": {"id": board_id, "name": board_id, "period": "GLOBAL", **fields}}
    )
    payload: dict[str, Any] = data["createLeaderboard"]
    return payload


async def _create_family(api: Api, family_id: str, **fields: Any) -> dict[str, Any]:
    data = await api.gql(
        CREATE_FAMILY, {"i": {"id": family_id, "name": family_id, "period": "DAILY", **fields}}
    )
    payload: dict[str, Any] = data["createLeaderboardFamily"]
    return payload


async def _play(api: Api, player: str, score: int, **targets: Any) -> dict[str, Any]:
    data = await api.gql(
        SUBMIT, {"i": {"playerId": player, "gameId": "arena", "score": score, **targets}}
    )
    payload: dict[str, Any] = data["submitScore"]
    return payload


async def _board(api: Api, board_id: str) -> dict[str, Any]:
    data: dict[str, Any] = (await api.gql(BOARD, {"id": board_id}))["leaderboard"]
    return data


async def _stats(api: Api, player: str) -> dict[str, Any]:
    data = await api.gql(
        "query($p: ID!) { player(id: $p) { gamesPlayed lifetimeScore } }", {"p": player}
    )
    stats: dict[str, Any] = data["player"]
    return stats


async def test_a_board_keeps_its_bounds(api: Api) -> None:
    created = await _create_board(api, "arena", scoreWidth=4, minScore=10, maxScore=1000)
    assert created == {
        "leaderboard": {"id": "arena", "minScore": 10, "maxScore": 1000},
        "errors": [],
    }
    only_max = await _create_board(api, "capped", maxScore=50)
    assert only_max["leaderboard"] == {"id": "capped", "minScore": None, "maxScore": 50}
    # Each request has loaders of its own: these reads come from the table.
    arena = await _board(api, "arena")
    assert (arena["minScore"], arena["maxScore"]) == (10, 1000)
    capped = await _board(api, "capped")
    assert (capped["minScore"], capped["maxScore"]) == (None, 50)
    stored = {i["leaderboardId"]: i for i in await scan_items(api.db) if LEADERBOARD.holds(i)}
    assert (stored["arena"]["minScore"], stored["arena"]["maxScore"]) == (10, 1000)
    assert "minScore" not in stored["capped"]


async def test_a_family_and_its_boards_keep_its_bounds(api: Api) -> None:
    api.clock.set(DAY)
    await api.create_player("ann")
    created = await _create_family(api, "duel", minScore=100, maxScore=5000)
    assert created["errors"] == []
    assert created["family"] == {
        "id": "duel",
        "minScore": 100,
        "maxScore": 5000,
        "current": {"id": "duel.daily.2026-11-21", "minScore": 100, "maxScore": 5000},
    }
    assert (await _play(api, "ann", 100, familyIds=["duel"]))["errors"] == []
    data = await api.gql(
        """{ leaderboardFamily(id: "duel") { minScore maxScore
             board(at: "2026-11-21T12:00:00Z") { id minScore maxScore entryCount } } }"""
    )
    assert data["leaderboardFamily"] == {
        "minScore": 100,
        "maxScore": 5000,
        "board": {
            "id": "duel.daily.2026-11-21",
            "minScore": 100,
            "maxScore": 5000,
            "entryCount": 1,
        },
    }
    items = await scan_items(api.db)
    family = next(i for i in items if FAMILY.holds(i))
    board = next(i for i in items if LEADERBOARD.holds(i))
    assert (family["minScore"], family["maxScore"]) == (100, 5000)
    assert (board["minScore"], board["maxScore"]) == (100, 5000)
    refused = await _play(api, "ann", 99, familyIds=["duel"])
    assert refused["errors"] == [
        {
            "code": "SCORE_OUT_OF_RANGE",
            "message": "score 99 is outside the bounds of 'duel.daily.2026-11-21' (100 to 5000)",
            "field": "score",
        }
    ]


INVALID = [
    ({"minScore": 20, "maxScore": 10}, "minScore", "minScore (20) must not be above maxScore (10)"),
    (
        {"scoreWidth": 4, "maxScore": 10000},
        "maxScore",
        "maxScore must be between 0 and 9999, the largest score of scoreWidth 4",
    ),
    (
        {"scoreWidth": 2, "minScore": 100},
        "minScore",
        "minScore must be between 0 and 99, the largest score of scoreWidth 2",
    ),
]


@pytest.mark.parametrize(("fields", "field", "message"), INVALID)
async def test_invalid_bounds_are_refused_at_their_field(
    api: Api, fields: dict[str, Any], field: str, message: str
) -> None:
    api.clock.set(DAY)
    board = await _create_board(api, "arena", **fields)
    family = await _create_family(api, "duel", **fields)
    expected = [{"code": "INVALID_ARGUMENT", "message": message, "field": field}]
    assert (board["leaderboard"], board["errors"]) == (None, expected)
    assert (family["family"], family["errors"]) == (None, expected)
    assert await scan_items(api.db) == []


@pytest.mark.parametrize("field", ["minScore", "maxScore"])
async def test_a_negative_bound_is_refused_by_its_type(api: Api, field: str) -> None:
    body = await api.raw(
        CREATE_BOARD, {"i": {"id": "arena", "name": "Arena", "period": "GLOBAL", field: -1}}
    )
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert field in body["errors"][0]["message"]
    body = await api.raw(
        CREATE_FAMILY, {"i": {"id": "duel", "name": "Duel", "period": "DAILY", field: -1}}
    )
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert await scan_items(api.db) == []


@pytest.mark.parametrize(("operator", "order"), [("BEST", "DESC"), ("INCREMENT", "ASC")])
async def test_plays_outside_the_bounds_are_refused(api: Api, operator: str, order: str) -> None:
    await api.create_player("ann")
    await _create_board(
        api, "arena", scoreWidth=4, minScore=10, maxScore=1000, operator=operator, sortOrder=order
    )
    for score in (0, 9, 1001, 9999):
        payload = await _play(api, "ann", score, leaderboardId="arena")
        assert payload["errors"] == [
            {
                "code": "SCORE_OUT_OF_RANGE",
                "message": f"score {score} is outside the bounds of 'arena' (10 to 1000)",
                "field": "score",
            }
        ]
    board = await _board(api, "arena")
    assert (board["entryCount"], board["topScores"]["edges"]) == (0, [])
    assert await _stats(api, "ann") == {"gamesPlayed": 0, "lifetimeScore": 0}


async def test_plays_at_the_bounds_are_accepted(api: Api) -> None:
    await api.create_player("ann")
    await api.create_player("bob")
    await _create_board(api, "arena", scoreWidth=4, minScore=10, maxScore=1000)
    assert (await _play(api, "ann", 10, leaderboardId="arena"))["errors"] == []
    assert (await _play(api, "bob", 1000, leaderboardId="arena"))["errors"] == []
    board = await _board(api, "arena")
    assert [e["node"]["score"] for e in board["topScores"]["edges"]] == [1000, 10]


async def test_an_increment_total_may_pass_the_bounds_within_the_width(api: Api) -> None:
    """The bounds apply to each play's amount; the total is held to the width alone."""
    await api.create_player("ann")
    await _create_board(
        api, "distance", operator="INCREMENT", scoreWidth=4, minScore=1, maxScore=1000
    )
    for _ in range(9):
        assert (await _play(api, "ann", 1000, leaderboardId="distance"))["errors"] == []
    board = await _board(api, "distance")
    assert board["topScores"]["edges"] == [{"node": {"score": 9000}}]
    past_width = await _play(api, "ann", 1000, leaderboardId="distance")
    assert past_width["errors"] == [
        {
            "code": "SCORE_OUT_OF_RANGE",
            "message": "the entry on 'distance' must stay between 0 and 9999",
            "field": "score",
        }
    ]


async def test_one_board_refusing_a_play_means_nothing_is_written_anywhere(api: Api) -> None:
    api.clock.set(DAY)
    await api.create_player("ann")
    await api.create_board("alltime")
    await _create_board(api, "capped", maxScore=100)
    await _create_family(api, "duel")
    await _create_family(api, "week", period="WEEKLY", minScore=600)
    before = await scan_items(api.db)
    boards = {"leaderboardId": "alltime", "leaderboardIds": ["capped"], "familyIds": ["duel"]}
    capped = await _play(api, "ann", 500, **boards)
    assert capped["errors"] == [
        {
            "code": "SCORE_OUT_OF_RANGE",
            "message": "score 500 is outside the bounds of 'capped' (0 to 100)",
            "field": "score",
        }
    ]
    weekly = await _play(api, "ann", 50, **{**boards, "familyIds": ["duel", "week"]})
    assert weekly["errors"] == [
        {
            "code": "SCORE_OUT_OF_RANGE",
            "message": "score 50 is outside the bounds of 'week.weekly.2026-W47' "
            "(600 to 9999999999)",
            "field": "score",
        }
    ]
    after = await scan_items(api.db)
    assert after == before
    assert not any(SESSION.holds(i) or SCORE.holds(i) or ENTRY_GUARD.holds(i) for i in after)
    for board_id in ("alltime", "capped"):
        board = await _board(api, board_id)
        assert (board["entryCount"], board["topScores"]["edges"]) == (0, [])
    families = await api.gql(
        """{ duel: leaderboardFamily(id: "duel") { board(at: "2026-11-21T10:00:00Z") { id } }
             week: leaderboardFamily(id: "week") { board(at: "2026-11-21T10:00:00Z") { id } } }"""
    )
    assert families == {"duel": {"board": None}, "week": {"board": None}}
    player = await api.gql(
        '{ player(id: "ann") { gamesPlayed lifetimeScore sessions { edges { cursor } } } }'
    )
    assert player["player"] == {"gamesPlayed": 0, "lifetimeScore": 0, "sessions": {"edges": []}}
    accepted = await _play(api, "ann", 100, **boards)
    assert [e["leaderboardId"] for e in accepted["entries"]] == [
        "alltime",
        "capped",
        "duel.daily.2026-11-21",
    ]


async def test_boards_without_bounds_are_held_to_their_width(api: Api) -> None:
    await api.create_player("ann")
    created = await _create_board(api, "narrow", scoreWidth=3)
    assert created["leaderboard"] == {"id": "narrow", "minScore": None, "maxScore": None}
    assert (await _play(api, "ann", 0, leaderboardId="narrow"))["errors"] == []
    assert (await _play(api, "ann", 999, leaderboardId="narrow"))["errors"] == []
    wide = await _play(api, "ann", 1000, leaderboardId="narrow")
    assert wide["errors"] == [
        {
            "code": "SCORE_OUT_OF_RANGE",
            "message": "the entry on 'narrow' must stay between 0 and 999",
            "field": "score",
        }
    ]
