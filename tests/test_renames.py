"""Entries hold their player's name, and renamePlayer keeps those copies right: a page of a
board names its players without reading them, before and after a rename, with plays and other
renames racing it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dynamo import renames
from dynamo.items import serialize
from dynamo.players import PLAYER
from dynamo.scores import holds_score
from leaderboard.config import Settings
from tests.conftest import ADMIN_KEYS, Api, _serve, both_rules, each_layout
from tests.scan import scan_items

RENAME = """mutation($i: RenamePlayerInput!) { renamePlayer(input: $i) {
    player { id name } complete errors { code field message } } }"""
TOP = """query($b: ID!) { leaderboard(id: $b) { topScores(first: 100) {
    edges { node { score player { id name } } } } } }"""


async def rename(api: Api, player: str, name: str, key: str | None = "default") -> dict[str, Any]:
    variables = {"i": {"playerId": player, "name": name}}
    if key == "default":
        body = await api.raw(RENAME, variables)
    else:
        body = await api.raw(RENAME, variables, key=key)
    return body


async def rename_fully(api: Api, player: str, name: str) -> list[dict[str, Any]]:
    """Send the rename until it answers complete; every answer."""
    answers: list[dict[str, Any]] = []
    for _ in range(50):
        payload: dict[str, Any] = (await rename(api, player, name))["data"]["renamePlayer"]
        assert payload["errors"] == [], payload
        answers.append(payload)
        if payload["complete"]:
            return answers
    raise AssertionError("the rename never completed")


async def names_on(api: Api, board: str) -> dict[str, str]:
    data = await api.gql(TOP, {"b": board})
    return {
        e["node"]["player"]["id"]: e["node"]["player"]["name"]
        for e in data["leaderboard"]["topScores"]["edges"]
    }


def score_items(items: list[dict[str, Any]], player: str) -> list[dict[str, Any]]:
    return [i for i in items if holds_score(i) and i["playerId"] == player]


def player_item(items: list[dict[str, Any]], player: str) -> dict[str, Any]:
    (found,) = [i for i in items if PLAYER.holds(i) and i["playerId"] == player]
    return found


async def _on_boards(api: Api, boards: list[str], players: list[str]) -> None:
    for board in boards:
        await api.create_board(board)
    for n, player in enumerate(players):
        await api.create_player(player, name=f"{player} the first")
        for board in boards:
            assert (await api.submit(player, board, 10 + n))["errors"] == []


@each_layout
async def test_a_rename_reaches_every_entry_and_the_plays_after_it(api: Api) -> None:
    boards = ["b0", "b1", "b2"]
    await _on_boards(api, boards, ["ada", "bob"])
    assert await names_on(api, "b1") == {"ada": "ada the first", "bob": "bob the first"}

    api.reset_calls()
    payload = (await rename(api, "ada", "  Ada Lovelace "))["data"]["renamePlayer"]
    assert payload == {
        "player": {"id": "ada", "name": "Ada Lovelace"},
        "complete": True,
        "errors": [],
    }
    # The player read and renamed, its guards read (one page), each entry renamed, the page
    # recorded, the rename done.
    assert api.calls == {"GetItem": 1, "UpdateItem": 3 + len(boards), "Query": 1}
    for board in boards:
        api.reset_calls()
        assert await names_on(api, board) == {"ada": "Ada Lovelace", "bob": "bob the first"}
        assert "BatchGetItem" not in api.calls
    items = await scan_items(api.db)
    ada = player_item(items, "ada")
    assert (ada["name"], ada["nameVersion"]) == ("Ada Lovelace", 1)
    assert "renaming" not in ada
    assert "renamedTo" not in ada
    assert {(i["playerName"], i["playerNameVersion"]) for i in score_items(items, "ada")} == {
        ("Ada Lovelace", 1)
    }
    assert {i["playerName"] for i in score_items(items, "bob")} == {"bob the first"}
    assert all("playerNameVersion" not in i for i in score_items(items, "bob"))

    # A play after the rename writes the new name into the entry it moves.
    assert (await api.submit("ada", "b0", 99))["errors"] == []
    moved = [i for i in score_items(await scan_items(api.db), "ada") if i["score"] == 99]
    assert [(i["playerName"], i["playerNameVersion"]) for i in moved] == [("Ada Lovelace", 1)]

    # The same rename again writes nothing.
    before = await scan_items(api.db)
    api.reset_calls()
    again = (await rename(api, "ada", "Ada Lovelace"))["data"]["renamePlayer"]
    assert (again["complete"], again["errors"]) == (True, [])
    assert api.calls == {"GetItem": 1}
    assert await scan_items(api.db) == before


async def test_renames_refused_write_nothing(api: Api) -> None:
    await _on_boards(api, ["b0"], ["ada"])
    before = await scan_items(api.db)
    body = await rename(api, "ada", "Ada", key=None)
    assert body["data"] is None
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"]
    for player, name, code, field in (
        ("nobody", "Ada", "PLAYER_NOT_FOUND", "playerId"),
        ("a#b", "Ada", "INVALID_ID", "playerId"),
        ("ada", "   ", "INVALID_NAME", "name"),
        ("ada", "x" * 101, "INVALID_NAME", "name"),
        ("ada", "tab\there", "INVALID_NAME", "name"),
    ):
        payload = (await rename(api, player, name))["data"]["renamePlayer"]
        assert [(e["code"], e["field"]) for e in payload["errors"]] == [(code, field)], payload
        assert (payload["player"], payload["complete"]) == (None, False)
    assert await scan_items(api.db) == before


async def test_entries_written_before_entries_held_names_read_their_players(api: Api) -> None:
    """An entry written before entries held their player's name has none: its player is read
    (those players only, in one batch); a rename gives it one."""
    await _on_boards(api, ["b0"], ["ada", "bob", "cy"])
    items = await scan_items(api.db)
    for item in score_items(items, "bob") + score_items(items, "cy"):
        await api.db.client.update_item(
            TableName=api.db.table,
            Key=serialize({"pk": item["pk"], "sk": item["sk"]}),
            UpdateExpression="REMOVE playerName",
        )
    api.reset_calls()
    assert await names_on(api, "b0") == {
        "ada": "ada the first",
        "bob": "bob the first",
        "cy": "cy the first",
    }
    assert api.calls == {"Query": 2, "BatchGetItem": 1}
    assert (await rename(api, "bob", "Bob"))["data"]["renamePlayer"]["complete"] is True
    api.reset_calls()
    assert (await names_on(api, "b0"))["bob"] == "Bob"
    assert api.calls == {"Query": 2, "GetItem": 1}  # cy's alone
    assert (await rename(api, "cy", "Cy"))["data"]["renamePlayer"]["complete"] is True
    api.reset_calls()
    assert await names_on(api, "b0") == {"ada": "ada the first", "bob": "Bob", "cy": "Cy"}
    assert api.calls == {"Query": 2}


async def test_a_removed_entry_is_not_renamed_nor_put_back(api: Api) -> None:
    await _on_boards(api, ["b0", "b1"], ["ada"])
    removed = await api.raw(
        """mutation { removeEntry(input: {leaderboardId: "b0", playerId: "ada",
            reason: "test"}) { errors { code } } }""",
        key=ADMIN_KEYS[0],
    )
    assert removed["data"]["removeEntry"]["errors"] == []
    assert (await rename(api, "ada", "Ada"))["data"]["renamePlayer"]["complete"] is True
    items = score_items(await scan_items(api.db), "ada")
    assert [(i["leaderboardId"], i["playerName"]) for i in items] == [("b1", "Ada")]


@pytest.fixture
async def frugal(settings: Settings, graphiql_assets: Path) -> AsyncIterator[Api]:
    """A service whose requests may make 30 database calls each."""
    frugal = replace(settings, limits=replace(settings.limits, max_dynamodb_calls=30))
    async with _serve(frugal, graphiql_assets) as served:
        yield served


async def test_a_rename_stops_within_its_budget_and_goes_on_when_sent_again(
    frugal: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(renames, "PAGE", 4)
    monkeypatch.setattr(renames, "ROOM_CALLS", 6)
    boards = [f"b{i:02d}" for i in range(40)]
    await _on_boards(frugal, boards, ["ada"])
    answers = await rename_fully(frugal, "ada", "Ada")
    assert len(answers) >= 2
    assert [a["complete"] for a in answers] == [False] * (len(answers) - 1) + [True]
    assert {a["player"]["name"] for a in answers} == {"Ada"}
    items = await scan_items(frugal.db)
    assert sorted(i["leaderboardId"] for i in score_items(items, "ada")) == boards
    assert {i["playerName"] for i in score_items(items, "ada")} == {"Ada"}
    ada = player_item(items, "ada")
    assert ada["nameVersion"] == 1  # the rename went on; it did not begin again
    assert "renaming" not in ada


@both_rules
@pytest.mark.slow
async def test_plays_and_renames_racing_leave_every_entry_with_the_last_name(
    instances: list[Api],
) -> None:
    """Plays of one player on four boards and renames of it, sent at once across three
    instances: each play either read the name it writes or is read again, and each rename
    writes only over older names; when all have answered, every entry holds the name the
    player has."""
    api = instances[0]
    boards = [f"b{i}" for i in range(4)]
    for board in boards:
        await api.create_board(board, operator="LATEST")
    await api.create_player("ada")

    async def play(n: int) -> None:
        target = instances[n % 3]
        for _ in range(10):
            result = await target.submit("ada", boards[n % 4], n)
            if [e["code"] for e in result["errors"]] != ["SUBMISSION_CONFLICT"]:
                break
        assert result["errors"] == []

    async def renamed(n: int) -> None:
        await rename_fully(instances[n % 3], "ada", f"Ada {n}")

    await asyncio.gather(*(play(n) for n in range(40)), *(renamed(n) for n in range(8)))
    items = await scan_items(api.db)
    ada = player_item(items, "ada")
    assert ada["nameVersion"] == 8
    assert "renaming" not in ada
    entries = score_items(items, "ada")
    assert sorted(i["leaderboardId"] for i in entries) == boards
    assert {(i["playerName"], i["playerNameVersion"]) for i in entries} == {
        (ada["name"], ada["nameVersion"])
    }
    assert set((await names_on(api, boards[0])).values()) == {ada["name"]}
