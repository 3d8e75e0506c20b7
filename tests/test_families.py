"""Periodic boards: a family's board per day, ISO week and season, driven by the app's clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dynamo.leaderboards import LEADERBOARD
from dynamo.scores import holds_score
from soak.invariants import check_table
from tests.conftest import Api, both_rules, each_layout
from tests.scan import scan_items

CREATE = """mutation($i: CreateLeaderboardFamilyInput!) { createLeaderboardFamily(input: $i) {
    family { id period timezone } errors { code field } } }"""
SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    session { leaderboardIds } entries { leaderboardId improved score { score } }
    errors { code field } } }"""
FAMILY = """query($id: ID!, $at: DateTime!) { leaderboardFamily(id: $id) {
    current { id startsAt endsAt entryCount expiresAt partitions family { id } }
    previous { id entryCount topScores { edges { node { score player { id } } } } }
    at: board(at: $at) { id entryCount } } }"""


async def _family(api: Api, **fields: Any) -> None:
    data = await api.gql(CREATE, {"i": {"name": "f", **api.board_fields, **fields}})
    assert data["createLeaderboardFamily"]["errors"] == [], data


async def _play(api: Api, at: str, player: str, score: int, family: str) -> dict[str, Any]:
    api.clock.set(at)
    data = await api.gql(
        SUBMIT,
        {"i": {"playerId": player, "familyIds": [family], "gameId": "g", "score": score}},
    )
    payload: dict[str, Any] = data["submitScore"]
    return payload


async def _board(api: Api, family: str, at: str) -> dict[str, Any]:
    data = await api.gql(FAMILY, {"id": family, "at": at})
    result: dict[str, Any] = data["leaderboardFamily"]
    return result


@each_layout
async def test_daily_family_rolls_over_at_local_midnight(api: Api) -> None:
    await api.create_player("ann")
    await api.create_player("bob")
    await _family(api, id="runs", period="DAILY", timezone="Europe/Paris", retentionDays=2)

    # 22:59 UTC is 23:59 in Paris on the 21st; 23:00 UTC is already the 22nd there.
    late = await _play(api, "2026-11-21T22:59:00+00:00", "ann", 10, "runs")
    assert late["entries"][0]["leaderboardId"] == "runs.daily.2026-11-21"
    await _play(api, "2026-11-21T22:59:30+00:00", "bob", 30, "runs")
    next_day = await _play(api, "2026-11-21T23:00:00+00:00", "ann", 20, "runs")
    assert next_day["entries"] == [
        {"leaderboardId": "runs.daily.2026-11-22", "improved": True, "score": {"score": 20}}
    ]
    assert next_day["session"]["leaderboardIds"] == ["runs.daily.2026-11-22"]

    view = await _board(api, "runs", "2026-11-21T12:00:00+00:00")
    assert view["current"]["id"] == "runs.daily.2026-11-22"
    assert view["current"]["startsAt"] == "2026-11-21T23:00:00+00:00"
    assert view["current"]["endsAt"] == "2026-11-22T23:00:00+00:00"
    assert view["current"]["entryCount"] == 1
    assert view["current"]["family"] == {"id": "runs"}
    assert view["current"]["partitions"] == api.partitions
    # The board expires retentionDays after it ends.
    assert view["current"]["expiresAt"] == "2026-11-24T23:00:00+00:00"
    assert view["previous"]["id"] == "runs.daily.2026-11-21"
    assert [
        (e["node"]["player"]["id"], e["node"]["score"])
        for e in view["previous"]["topScores"]["edges"]
    ] == [("bob", 30), ("ann", 10)]
    assert view["at"] == {"id": "runs.daily.2026-11-21", "entryCount": 2}

    # The closed day's board refuses a play stamped after its end.
    api.clock.set("2026-11-21T23:30:00+00:00")
    closed = await api.submit("ann", "runs.daily.2026-11-21", 99)
    assert [e["code"] for e in closed["errors"]] == ["LEADERBOARD_CLOSED"]

    items = {(i["pk"], i["sk"]): i for i in await scan_items(api.db)}
    old = items[LEADERBOARD.key(leaderboard_id="runs.daily.2026-11-21")]
    assert old["ttl"] == int(datetime(2026, 11, 23, 23, tzinfo=UTC).timestamp())
    assert old["familyId"] == "runs"
    entries = [
        v
        for (pk, sk), v in items.items()
        if holds_score({"pk": pk, "sk": sk}) and v["leaderboardId"] == "runs.daily.2026-11-21"
    ]
    assert {e["ttl"] for e in entries} == {old["ttl"]}


@each_layout
async def test_weekly_family_follows_iso_weeks(api: Api) -> None:
    await api.create_player("ann")
    await _family(api, id="wk", period="WEEKLY", operator="INCREMENT")
    # Sunday 2027-01-03 belongs to ISO week 2026-W53; Monday 2027-01-04 starts 2027-W01.
    sunday = await _play(api, "2027-01-03T23:59:59+00:00", "ann", 5, "wk")
    again = await _play(api, "2027-01-03T23:59:59.500000+00:00", "ann", 7, "wk")
    monday = await _play(api, "2027-01-04T00:00:00+00:00", "ann", 1, "wk")
    assert sunday["entries"][0]["leaderboardId"] == "wk.weekly.2026-W53"
    assert again["entries"][0]["score"] == {"score": 12}
    assert monday["entries"][0] == {
        "leaderboardId": "wk.weekly.2027-W01",
        "improved": True,
        "score": {"score": 1},
    }
    view = await _board(api, "wk", "2026-12-28T00:00:00+00:00")
    assert view["current"]["startsAt"] == "2027-01-04T00:00:00+00:00"
    assert view["previous"]["topScores"]["edges"][0]["node"]["score"] == 12
    assert view["at"] == {"id": "wk.weekly.2026-W53", "entryCount": 1}


@each_layout
async def test_season_family_counts_fixed_length_seasons(api: Api) -> None:
    await api.create_player("ann")
    await _family(
        api, id="ladder", period="SEASON", seasonStart="2026-09-01T00:00:00+00:00", seasonDays=30
    )
    before = await _play(api, "2026-08-31T23:59:59+00:00", "ann", 5, "ladder")
    assert [(e["code"], e["field"]) for e in before["errors"]] == [
        ("LEADERBOARD_CLOSED", "familyIds")
    ]
    first = await _play(api, "2026-09-30T23:59:59+00:00", "ann", 5, "ladder")
    second = await _play(api, "2026-10-01T00:00:00+00:00", "ann", 6, "ladder")
    assert first["entries"][0]["leaderboardId"] == "ladder.season.1"
    assert second["entries"][0]["leaderboardId"] == "ladder.season.2"
    api.clock.set("2026-10-15T00:00:00+00:00")
    view = await _board(api, "ladder", "2026-09-15T00:00:00+00:00")
    assert view["current"]["id"] == "ladder.season.2"
    assert view["previous"]["id"] == "ladder.season.1"
    assert view["at"]["id"] == "ladder.season.1"


async def test_current_board_before_its_first_play_and_bad_families(api: Api) -> None:
    await _family(api, id="quiet", period="DAILY")
    api.clock.set("2026-11-21T10:00:00+00:00")
    view = await _board(api, "quiet", "2026-11-20T10:00:00+00:00")
    assert view["current"]["id"] == "quiet.daily.2026-11-21"
    assert view["current"]["entryCount"] == 0
    assert view["previous"] is None
    assert view["at"] is None
    missing = await api.gql('{ leaderboard(id: "quiet.daily.2026-11-21") { id } }')
    assert missing["leaderboard"] is None

    cases = [
        ({"id": "quiet", "period": "DAILY"}, "LEADERBOARD_EXISTS", "id"),
        ({"id": "g", "period": "GLOBAL"}, "INVALID_ARGUMENT", "period"),
        (
            {"id": "tz", "period": "DAILY", "timezone": "Mars/Olympus"},
            "INVALID_ARGUMENT",
            "timezone",
        ),
        ({"id": "s", "period": "SEASON"}, "INVALID_ARGUMENT", "seasonDays"),
        ({"id": "x" * 41, "period": "DAILY"}, "INVALID_ID", "id"),
    ]
    for fields, code, field in cases:
        data = await api.gql(CREATE, {"i": {"name": "n", **fields}})
        assert data["createLeaderboardFamily"]["errors"] == [{"code": code, "field": field}]


@each_layout
@both_rules
async def test_racing_first_plays_create_the_period_board_once(instances: list[Api]) -> None:
    import asyncio

    api = instances[0]
    await _family(api, id="rush", period="DAILY")
    players = [f"p{i}" for i in range(12)]
    for p in players:
        await api.create_player(p)
    for instance in instances:
        instance.clock.set("2026-11-21T08:00:00+00:00")
    results = await asyncio.gather(
        *(
            instances[i % 3].gql(
                SUBMIT,
                {"i": {"playerId": p, "familyIds": ["rush"], "gameId": "g", "score": i}},
            )
            for i, p in enumerate(players)
        )
    )
    assert all(r["submitScore"]["errors"] == [] for r in results)
    board = await api.gql('{ leaderboard(id: "rush.daily.2026-11-21") { entryCount name } }')
    assert board["leaderboard"] == {"entryCount": 12, "name": "f (daily.2026-11-21)"}


UPDATE = """mutation($i: UpdateLeaderboardFamilyInput!) { updateLeaderboardFamily(input: $i) {
    family { id partitions } errors { code field } } }"""
PARTITIONS = """query($id: ID!, $at: DateTime!) { leaderboardFamily(id: $id) { partitions
    current { id partitions } at: board(at: $at) { id partitions
      topScores { edges { node { score player { id } } } } } } }"""


async def test_a_familys_next_boards_take_its_partitions_as_changed(api: Api) -> None:
    """A studio raises a daily family's partitions for tomorrow's board: today's keeps its one
    partition, tomorrow's is created with four, and both read the same."""
    players = [f"p{n}" for n in range(8)]
    for p in players:
        await api.create_player(p)
    await _family(api, id="days", period="DAILY")
    for n, p in enumerate(players):
        assert (await _play(api, "2026-11-21T10:00:00+00:00", p, n, "days"))["errors"] == []

    raised = await api.gql(UPDATE, {"i": {"id": "days", "partitions": 4}})
    assert raised["updateLeaderboardFamily"] == {
        "family": {"id": "days", "partitions": 4},
        "errors": [],
    }
    view = await api.gql(PARTITIONS, {"id": "days", "at": "2026-11-21T12:00:00+00:00"})
    family = view["leaderboardFamily"]
    assert family["partitions"] == 4
    # The board of today keeps the partitions it was created with; before its first play
    # the board of a period is shown as that play will create it.
    assert family["current"] == {"id": "days.daily.2026-11-21", "partitions": 1}
    api.clock.set("2026-11-22T00:00:00+00:00")
    view = await api.gql(PARTITIONS, {"id": "days", "at": "2026-11-21T12:00:00+00:00"})
    assert view["leaderboardFamily"]["current"] == {"id": "days.daily.2026-11-22", "partitions": 4}

    for n, p in enumerate(players):
        assert (await _play(api, "2026-11-22T10:00:00+00:00", p, 10 * n, "days"))["errors"] == []
    expected = {
        "2026-11-21T12:00:00+00:00": (1, [(n, f"p{n}") for n in range(7, -1, -1)]),
        "2026-11-22T12:00:00+00:00": (4, [(10 * n, f"p{n}") for n in range(7, -1, -1)]),
    }
    for at, (partitions, top) in expected.items():
        board = (await api.gql(PARTITIONS, {"id": "days", "at": at}))["leaderboardFamily"]["at"]
        assert board["partitions"] == partitions
        edges = board["topScores"]["edges"]
        assert [(e["node"]["score"], e["node"]["player"]["id"]) for e in edges] == top
    items = await scan_items(api.db)
    pks = {i["pk"] for i in items if holds_score(i)}
    assert {pk for pk in pks if "2026-11-21" in pk} == {"LEADERBOARD#days.daily.2026-11-21"}
    assert {pk for pk in pks if "2026-11-22" in pk} <= {
        f"LEADERBOARD#days.daily.2026-11-22#{n:02d}" for n in range(4)
    }
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []


async def test_a_process_creates_a_board_with_the_partitions_another_one_set(
    instances: list[Api],
) -> None:
    """The first play of a period reads the family's partitions as they stand, past the
    definition its process read earlier."""
    one, other, _ = instances
    await one.create_player("ann")
    await _family(one, id="days", period="DAILY")
    assert (await _play(one, "2026-11-21T10:00:00+00:00", "ann", 1, "days"))["errors"] == []
    raised = await other.gql(UPDATE, {"i": {"id": "days", "partitions": 8}})
    assert raised["updateLeaderboardFamily"]["errors"] == []
    assert (await _play(one, "2026-11-22T10:00:00+00:00", "ann", 2, "days"))["errors"] == []
    at = {"id": "days", "at": "2026-11-22T10:00:00+00:00"}
    family = (await one.gql(PARTITIONS, at))["leaderboardFamily"]
    assert (family["partitions"], family["at"]["partitions"]) == (8, 8)


async def test_bad_partitions_are_refused_at_their_field_and_write_nothing(api: Api) -> None:
    await _family(api, id="days", period="DAILY")
    before = await scan_items(api.db)
    for partitions in (0, 3, 96, 128, -2):
        created = await api.gql(
            CREATE, {"i": {"id": "f2", "name": "f", "period": "DAILY", "partitions": partitions}}
        )
        assert created["createLeaderboardFamily"]["errors"] == [
            {"code": "INVALID_ARGUMENT", "field": "partitions"}
        ]
        updated = await api.gql(UPDATE, {"i": {"id": "days", "partitions": partitions}})
        assert updated["updateLeaderboardFamily"] == {
            "family": None,
            "errors": [{"code": "INVALID_ARGUMENT", "field": "partitions"}],
        }
    unknown = await api.gql(UPDATE, {"i": {"id": "nope", "partitions": 2}})
    assert unknown["updateLeaderboardFamily"]["errors"] == [
        {"code": "LEADERBOARD_NOT_FOUND", "field": "id"}
    ]
    bad_id = await api.gql(UPDATE, {"i": {"id": "a#b", "partitions": 2}})
    assert bad_id["updateLeaderboardFamily"]["errors"] == [{"code": "INVALID_ID", "field": "id"}]
    assert await scan_items(api.db) == before
    denied = await api.raw(UPDATE, {"i": {"id": "days", "partitions": 2}}, key=None)
    assert [e["extensions"]["code"] for e in denied["errors"]] == ["UNAUTHENTICATED"]
    assert await scan_items(api.db) == before
