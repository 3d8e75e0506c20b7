"""A family's board ids are reserved: they cannot be created by hand, a family cannot be
created over boards holding them, and a board holding one without belonging to its family
takes no play."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem, Period
from tests.conftest import Api
from tests.scan import scan_items

CREATE_BOARD = """mutation($i: CreateLeaderboardInput!) { createLeaderboard(input: $i) {
    leaderboard { id } errors { code message field } } }"""
CREATE_FAMILY = """mutation($i: CreateLeaderboardFamilyInput!) {
    createLeaderboardFamily(input: $i) { family { id } errors { code message field } } }"""
SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    session { id } entries { leaderboardId } errors { code message field } } }"""
FAMILY = """query { leaderboardFamily(id: "arena") { current { id entryCount family { id } }
    board(at: "2026-11-27T12:00:00Z") { id } } }"""

NOW = "2026-11-24T12:00:00+00:00"


async def _create_board(api: Api, board_id: str, **fields: Any) -> dict[str, Any]:
    data = await api.gql(
        CREATE_BOARD, {"i": {"id": board_id, "name": board_id, "period": "GLOBAL", **fields}}
    )
    payload: dict[str, Any] = data["createLeaderboard"]
    return payload


async def _create_family(api: Api, family_id: str, period: str = "DAILY") -> dict[str, Any]:
    fields: dict[str, Any] = {"id": family_id, "name": family_id, "period": period}
    if period == "SEASON":
        fields |= {"seasonStart": "2026-11-01T00:00:00Z", "seasonDays": 10}
    data = await api.gql(CREATE_FAMILY, {"i": fields})
    payload: dict[str, Any] = data["createLeaderboardFamily"]
    return payload


async def _write_board(api: Api, board_id: str) -> None:
    """A board as createLeaderboard wrote it before family ids were reserved."""
    board = LeaderboardItem(
        leaderboard_id=board_id,
        name="squat",
        period=Period.GLOBAL,
        score_width=1,
        ends_at=datetime.fromisoformat("2020-01-01T00:00:00+00:00"),
        created_at=datetime.fromisoformat(NOW),
    )
    await api.db.client.put_item(TableName=api.db.table, Item=serialize(LEADERBOARD.item(board)))


@pytest.mark.parametrize(
    "board_id",
    ["arena.daily.2026-11-25", "arena.weekly.2026-W48", "arena.season.3", "a.b.daily.2027-01-01"],
)
async def test_family_board_ids_cannot_be_created_by_hand(api: Api, board_id: str) -> None:
    api.clock.set(NOW)
    api.reset_calls()
    payload = await _create_board(api, board_id, scoreWidth=1, endsAt="2020-01-02T00:00:00Z")
    assert payload["leaderboard"] is None
    [error] = payload["errors"]
    assert (error["code"], error["field"]) == ("INVALID_ID", "id")
    assert "reserved for the boards of leaderboard families" in error["message"]
    assert api.calls == {}
    assert await scan_items(api.db) == []


@pytest.mark.parametrize(
    "board_id", ["arena.daily", "arena.daily.tomorrow", "daily.2026-11-25", "arena.season.x"]
)
async def test_ids_merely_resembling_the_form_are_free(api: Api, board_id: str) -> None:
    assert (await _create_board(api, board_id))["errors"] == []


@pytest.mark.parametrize(
    ("period", "taken"),
    [
        ("DAILY", "arena.daily.2026-11-23"),
        ("DAILY", "arena.daily.2026-11-24"),
        ("DAILY", "arena.daily.2026-11-25"),
        ("WEEKLY", "arena.weekly.2026-W49"),
        ("SEASON", "arena.season.3"),
    ],
)
async def test_a_family_cannot_be_created_over_existing_boards(
    api: Api, period: str, taken: str
) -> None:
    api.clock.set(NOW)
    await _write_board(api, taken)
    before = await scan_items(api.db)
    api.reset_calls()
    payload = await _create_family(api, "arena", period)
    assert payload["family"] is None
    [error] = payload["errors"]
    assert (error["code"], error["field"]) == ("LEADERBOARD_EXISTS", "id")
    assert taken in error["message"]
    # One BatchGetItem reads the previous, current and next periods' boards; nothing written.
    assert api.calls == {"BatchGetItem": 1}
    assert await scan_items(api.db) == before


async def test_a_family_over_free_ids_costs_one_read_and_one_write(api: Api) -> None:
    api.clock.set(NOW)
    await _write_board(api, "arena.daily.2026-11-27")  # beyond the next period
    api.reset_calls()
    assert (await _create_family(api, "arena"))["errors"] == []
    assert api.calls == {"BatchGetItem": 1, "PutItem": 1}


async def test_a_squatted_board_takes_no_play(api: Api) -> None:
    api.clock.set(NOW)
    await api.create_player("p")
    await _write_board(api, "arena.daily.2026-11-27")
    assert (await _create_family(api, "arena"))["errors"] == []
    api.clock.set("2026-11-27T12:00:00+00:00")
    before = await scan_items(api.db)

    # Through the family: its board of the day is held by a board that is not the family's.
    api.reset_calls()
    data = await api.gql(
        SUBMIT, {"i": {"playerId": "p", "gameId": "g", "score": 1, "familyIds": ["arena"]}}
    )
    [error] = data["submitScore"]["errors"]
    assert (error["code"], error["field"]) == ("LEADERBOARD_EXISTS", "familyIds")
    assert data["submitScore"]["session"] is None
    # The family's definition (read once per process), then the play's consistent reads
    # (the player and its guard; beside them the board): no board written.
    assert api.calls == {"GetItem": 1, "BatchGetItem": 1, "Query": 1}

    # By its id: a board in a family board's form that belongs to no family.
    data = await api.gql(
        SUBMIT,
        {
            "i": {
                "playerId": "p",
                "gameId": "g",
                "score": 1,
                "leaderboardId": "arena.daily.2026-11-27",
            }
        },
    )
    [error] = data["submitScore"]["errors"]
    assert (error["code"], error["field"]) == ("INVALID_ID", "leaderboardId")
    assert await scan_items(api.db) == before

    # The family does not present the squatter as its board.
    family = (await api.gql(FAMILY))["leaderboardFamily"]
    assert family["board"] is None
    assert family["current"] == {
        "id": "arena.daily.2026-11-27",
        "entryCount": 0,
        "family": {"id": "arena"},
    }


async def test_the_familys_own_boards_still_take_plays(api: Api) -> None:
    api.clock.set(NOW)
    await api.create_player("p")
    assert (await _create_family(api, "arena"))["errors"] == []
    via_family = await api.gql(
        SUBMIT, {"i": {"playerId": "p", "gameId": "g", "score": 5, "familyIds": ["arena"]}}
    )
    assert via_family["submitScore"]["errors"] == []
    by_id = await api.gql(
        SUBMIT,
        {
            "i": {
                "playerId": "p",
                "gameId": "g",
                "score": 6,
                "leaderboardId": "arena.daily.2026-11-24",
            }
        },
    )
    assert by_id["submitScore"]["errors"] == []
    assert by_id["submitScore"]["entries"] == [{"leaderboardId": "arena.daily.2026-11-24"}]
