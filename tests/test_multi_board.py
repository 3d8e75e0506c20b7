"""One play on several boards and families: one transaction, all or nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.conftest import Api, each_layout
from tests.scan import scan_items

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    improved score { score } rank { rank total }
    session { id leaderboardId leaderboardIds }
    entries { leaderboardId improved score { score } rank { rank total percentile } }
    errors { code field } } }"""


async def _setup(api: Api) -> None:
    await api.create_player("ann")
    await api.create_player("bob")
    await api.create_board("alltime")
    await api.create_board("laps", sortOrder="ASC", scoreWidth=6)
    await api.gql(
        """mutation { createLeaderboardFamily(input: {id: "arena", name: "Arena",
           period: DAILY}) { errors { code } } }"""
    )
    await api.gql(
        """mutation { createLeaderboardFamily(input: {id: "arena-week", name: "Arena week",
           period: WEEKLY, operator: INCREMENT}) { errors { code } } }"""
    )


def _play(player: str, score: int, **extra: Any) -> dict[str, Any]:
    return {
        "i": {
            "playerId": player,
            "gameId": "arena",
            "score": score,
            "leaderboardId": "alltime",
            "leaderboardIds": ["laps"],
            "familyIds": ["arena", "arena-week"],
            **extra,
        }
    }


@each_layout
async def test_one_play_enters_every_board_in_one_transaction(api: Api) -> None:
    await _setup(api)
    api.clock.set("2026-11-21T10:00:00+00:00")
    await api.gql(SUBMIT, _play("bob", 500))
    api.reset_calls()
    payload = (await api.gql(SUBMIT, _play("ann", 400)))["submitScore"]
    # One consistent BatchGetItem (player, 4 boards, 4 entry guards) and one transaction,
    # plus the COUNT Queries of the ranks asked for; family definitions come from memory.
    calls = api.calls
    assert (calls["BatchGetItem"], calls["TransactWriteItems"]) == (1, 1)
    assert set(calls) <= {"BatchGetItem", "TransactWriteItems", "Query"}

    assert payload["errors"] == []
    boards = ["alltime", "laps", "arena.daily.2026-11-21", "arena-week.weekly.2026-W47"]
    assert payload["session"]["leaderboardIds"] == boards
    assert payload["session"]["leaderboardId"] == "alltime"
    assert [
        (e["leaderboardId"], e["score"]["score"], e["rank"]["rank"]) for e in payload["entries"]
    ] == [
        ("alltime", 400, 2),
        ("laps", 400, 1),
        ("arena.daily.2026-11-21", 400, 2),
        ("arena-week.weekly.2026-W47", 400, 2),
    ]
    assert payload["entries"][1]["rank"] == {"rank": 1, "total": 2, "percentile": 100.0}
    assert payload["entries"][0]["rank"]["percentile"] == 50.0
    assert (payload["improved"], payload["score"], payload["rank"]) == (
        True,
        {"score": 400},
        {"rank": 2, "total": 2},
    )
    player = await api.gql('{ player(id: "ann") { gamesPlayed lifetimeScore } }')
    assert player["player"] == {"gamesPlayed": 1, "lifetimeScore": 400}


@each_layout
async def test_one_closed_board_means_nothing_is_written_anywhere(api: Api) -> None:
    await _setup(api)
    ended = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    await api.create_board("over", startsAt="2020-01-01T00:00:00+00:00", endsAt=ended)
    before = await scan_items(api.db)
    payload = await api.gql(SUBMIT, _play("ann", 1, leaderboardIds=["laps", "over"]))
    assert payload["submitScore"]["errors"] == [
        {"code": "LEADERBOARD_CLOSED", "field": "leaderboardIds"}
    ]
    unknown = await api.gql(SUBMIT, _play("ann", 1, familyIds=["arena", "nope"]))
    assert unknown["submitScore"]["errors"] == [
        {"code": "LEADERBOARD_NOT_FOUND", "field": "familyIds"}
    ]
    after = await scan_items(api.db)
    assert len(after) == len(before)


async def test_board_cap_and_repeated_boards(api: Api) -> None:
    await _setup(api)
    many = [f"b{i}" for i in range(20)]
    too_many = await api.gql(SUBMIT, _play("ann", 1, leaderboardIds=many))
    assert too_many["submitScore"]["errors"] == [
        {"code": "INVALID_ARGUMENT", "field": "leaderboardIds"}
    ]
    for board in many[:17]:
        await api.create_board(board)
    # 17 named + alltime + two families = 20 boards: 83 transaction items, accepted.
    full = await api.gql(SUBMIT, _play("ann", 3, leaderboardIds=[*many[:17], "alltime"]))
    assert full["submitScore"]["errors"] == []
    assert len(full["submitScore"]["entries"]) == 20
    none = await api.gql(SUBMIT, {"i": {"playerId": "ann", "gameId": "g", "score": 1}})
    assert none["submitScore"]["errors"] == [{"code": "INVALID_ARGUMENT", "field": "leaderboardId"}]
