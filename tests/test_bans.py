"""Bans: a banned player's entries leave every board and its plays are refused, through
GraphQL against DynamoDB Local."""

from __future__ import annotations

import asyncio
from typing import Any

from dynamo import ranks
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.leaderboards import get_leaderboard
from dynamo.moderation import MODERATION
from dynamo.scores import ScoreItem, holds_score
from dynamo.sessions import SESSION
from edge.auth import fingerprint
from soak.invariants import check_table
from tests.conftest import ADMIN_KEYS, API_KEYS, Api, Indexed, both_rules, each_layout
from tests.scan import scan_items
from tests.test_subscriptions import WATCH, _next, _subscribed

ADMIN = ADMIN_KEYS[0]

BAN = """mutation($i: BanPlayerInput!) { banPlayer(input: $i) {
    action { id action actor reason playerId removedCount removed { leaderboardId score } }
    errors { code message field } } }"""
UNBAN = """mutation($i: UnbanPlayerInput!) { unbanPlayer(input: $i) {
    action { id action reason playerId } errors { code message field } } }"""
STANDING = """query($id: ID!) { player(id: $id) { id moderation { banned bannedAt reason } } }"""


async def ban(
    api: Api, player: str, reason: str = "cheated", key: str | None = ADMIN
) -> dict[str, Any]:
    return await api.raw(BAN, {"i": {"playerId": player, "reason": reason}}, key=key)


async def unban(
    api: Api, player: str, reason: str = "appeal", key: str | None = ADMIN
) -> dict[str, Any]:
    return await api.raw(UNBAN, {"i": {"playerId": player, "reason": reason}}, key=key)


async def _boards(api: Api, count: int, players: tuple[str, ...] = ("ann", "bob")) -> list[str]:
    """``count`` boards, on each of which every player has an entry (ann the best)."""
    for p in players:
        await api.create_player(p)
    boards = [f"b{i:03d}" for i in range(count)]
    for board in boards:
        await api.create_board(board)
    for start in range(0, count, 20):
        chunk = boards[start : start + 20]
        for rank, p in enumerate(players):
            payload = await api.gql(
                """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
                    errors { code } } }""",
                {
                    "i": {
                        "playerId": p,
                        "gameId": "g",
                        "score": 100 - rank,
                        "leaderboardIds": chunk,
                    }
                },
            )
            assert payload["submitScore"]["errors"] == []
    return boards


def _entries_of(items: list[dict[str, Any]], player: str) -> list[dict[str, Any]]:
    return [i for i in items if holds_score(i) and i["playerId"] == player]


async def test_ban_and_unban_need_an_admin_key_and_write_nothing_without_one(api: Api) -> None:
    await _boards(api, 1)
    before = await scan_items(api.db)
    for key, code in ((None, "UNAUTHENTICATED"), (API_KEYS[0], "FORBIDDEN")):
        for body in (await ban(api, "ann", key=key), await unban(api, "ann", key=key)):
            assert body["data"] is None
            assert [e["extensions"]["code"] for e in body["errors"]] == [code]
    assert await scan_items(api.db) == before
    # The player's standing is for admin keys only.
    standing = await api.raw(STANDING, {"id": "ann"}, key=API_KEYS[0])
    assert standing["data"]["player"]["moderation"] is None
    anonymous = await api.raw(STANDING, {"id": "ann"}, key=None)
    assert anonymous["data"]["player"]["moderation"] is None
    admin = await api.raw(STANDING, {"id": "ann"}, key=ADMIN)
    assert admin["data"]["player"]["moderation"] == {
        "banned": False,
        "bannedAt": None,
        "reason": None,
    }


@each_layout
async def test_a_ban_takes_every_entry_off_every_board_in_bounded_transactions(api: Api) -> None:
    boards = await _boards(api, 60)
    api.reset_calls()
    body = await ban(api, "ann", reason="aimbot on every board")
    payload = body["data"]["banPlayer"]
    assert payload["errors"] == []
    action = payload["action"]
    assert (action["action"], action["playerId"], action["reason"]) == (
        "BAN_PLAYER",
        "ann",
        "aimbot on every board",
    )
    assert action["actor"] == fingerprint(ADMIN)
    assert action["removedCount"] == 60
    assert sorted(e["leaderboardId"] for e in action["removed"]) == boards
    assert {e["score"] for e in action["removed"]} == {100}
    # The mark, then 60 entries in transactions of at most 25 (3 of them).
    assert api.calls["TransactWriteItems"] == 1 + 3

    items = await scan_items(api.db)
    assert _entries_of(items, "ann") == []
    guards = [i for i in items if ENTRY_GUARD.holds(i) and i["playerId"] == "ann"]
    assert len(guards) == 60
    assert all(g["removed"] for g in guards)
    for board_id in boards[:3]:
        board = await get_leaderboard(api.db, board_id)
        assert board is not None
        assert board.entry_count == 1
    data = await api.gql(
        '{ leaderboard(id: "b000") { topScores(first: 5) { edges { node { score rank '
        "player { id } } } } } }"
    )
    tops = data["leaderboard"]["topScores"]["edges"]
    assert [(e["node"]["player"]["id"], e["node"]["rank"]) for e in tops] == [("bob", 1)]
    # The record, in the log, is exactly what left.
    records = [i for i in items if MODERATION.holds(i)]
    assert len(records) == 1
    assert records[0]["removedCount"] == 60
    assert len(records[0]["removed"]) == 60

    standing = await api.raw(STANDING, {"id": "ann"}, key=ADMIN)
    moderation = standing["data"]["player"]["moderation"]
    assert moderation["banned"] is True
    assert moderation["reason"] == "aimbot on every board"
    assert moderation["bannedAt"] is not None
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []


async def test_a_banned_players_plays_are_refused_and_write_nothing(api: Api) -> None:
    await _boards(api, 2)
    assert (await ban(api, "ann"))["data"]["banPlayer"]["errors"] == []
    before = await scan_items(api.db)
    refused = await api.submit("ann", "b000", 5)
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [("PLAYER_BANNED", "playerId")]
    assert await scan_items(api.db) == before


async def test_a_ban_sent_again_answers_the_ban_in_force_and_writes_nothing(api: Api) -> None:
    await _boards(api, 2)
    first = (await ban(api, "ann", reason="first"))["data"]["banPlayer"]["action"]
    before = await scan_items(api.db)
    api.reset_calls()
    again = (await ban(api, "ann", reason="second"))["data"]["banPlayer"]
    assert again["errors"] == []
    assert again["action"] == first
    assert "TransactWriteItems" not in api.calls
    assert await scan_items(api.db) == before


@each_layout
async def test_unbanning_lifts_the_refusal_but_removed_entries_stay_removed(api: Api) -> None:
    await _boards(api, 2)
    await ban(api, "ann")
    payload = (await unban(api, "ann", reason="appeal upheld"))["data"]["unbanPlayer"]
    assert payload["errors"] == []
    assert (payload["action"]["action"], payload["action"]["reason"]) == (
        "UNBAN_PLAYER",
        "appeal upheld",
    )
    standing = await api.raw(STANDING, {"id": "ann"}, key=ADMIN)
    assert standing["data"]["player"]["moderation"]["banned"] is False
    data = await api.gql('{ player(id: "ann") { entry(leaderboardId: "b000") { score } } }')
    assert data["player"]["entry"] is None
    # The player plays again, and enters the board again (counted once).
    assert (await api.submit("ann", "b000", 7))["errors"] == []
    board = await get_leaderboard(api.db, "b000")
    assert board is not None
    assert board.entry_count == 2
    # A second unban has nothing to lift.
    again = (await unban(api, "ann"))["data"]["unbanPlayer"]
    assert [(e["code"], e["field"]) for e in again["errors"]] == [("PLAYER_NOT_BANNED", "playerId")]
    # and a new ban is a new action.
    second = (await ban(api, "ann"))["data"]["banPlayer"]["action"]
    assert second["removedCount"] == 1
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []


async def test_bad_bans_are_refused_at_their_field(api: Api) -> None:
    await _boards(api, 1)
    before = await scan_items(api.db)
    cases = [
        ("nobody", "cheated", "PLAYER_NOT_FOUND", "playerId"),
        ("a#b", "cheated", "INVALID_ID", "playerId"),
        ("ann", " ", "INVALID_ARGUMENT", "reason"),
        ("ann", "x" * 501, "INVALID_ARGUMENT", "reason"),
    ]
    for player, reason, code, field in cases:
        payload = (await ban(api, player, reason))["data"]["banPlayer"]
        assert [(e["code"], e["field"]) for e in payload["errors"]] == [(code, field)], payload
        assert payload["action"] is None
        unbanned = (await unban(api, player, reason))["data"]["unbanPlayer"]
        expected = "PLAYER_NOT_BANNED" if code == "PLAYER_NOT_FOUND" else code
        if player == "nobody":
            expected = "PLAYER_NOT_FOUND"
        assert [e["code"] for e in unbanned["errors"]] == [expected]
    assert await scan_items(api.db) == before


@each_layout
async def test_a_subscriber_receives_the_new_top_after_a_ban(api: Api) -> None:
    await api.create_player("ann")
    await api.create_player("bob")
    await api.create_player("cat")
    await api.create_board("b")
    for p, s in (("ann", 90), ("bob", 80), ("cat", 70)):
        assert (await api.submit(p, "b", s))["errors"] == []
    async with _subscribed(api, WATCH) as ws:
        assert await _next(ws) == [("ann", 90, 1), ("bob", 80, 2), ("cat", 70, 3)]
        await ban(api, "ann")
        assert await _next(ws) == [("bob", 80, 1), ("cat", 70, 2)]


@each_layout
@both_rules
async def test_a_ban_racing_thirty_plays_on_two_instances_leaves_no_entry(
    instances: list[Api],
) -> None:
    """Thirty plays of one player through two instances, and a ban through a third while
    they are under way."""
    one, two, moderator = instances
    for p in ("ann", "bob"):
        await one.create_player(p)
    boards = ["r1", "r2", "r3"]
    for board in boards:
        await one.create_board(board)
    assert (await one.submit("bob", "r1", 50))["errors"] == []

    async def play(i: int) -> str:
        served = (one, two)[i % 2]
        payload = await served.submit("ann", boards[i % 3], 10 + i)
        return payload["errors"][0]["code"] if payload["errors"] else "OK"

    plays = [asyncio.create_task(play(i)) for i in range(30)]
    # The ban goes out once two plays are done, while the others still wait their turn (an
    # instance records one player's plays one after another), however slow the machine.
    while sum(task.done() for task in plays) < 2:
        await asyncio.wait([t for t in plays if not t.done()], return_when=asyncio.FIRST_COMPLETED)
    banned = await ban(moderator, "ann")
    assert banned["data"]["banPlayer"]["errors"] == []
    # When the ban answers, no entry of the player remains, whatever the plays still do.
    assert _entries_of(await scan_items(one.db), "ann") == []
    outcomes = await asyncio.gather(*plays)
    assert set(outcomes) <= {"OK", "PLAYER_BANNED"}
    assert "PLAYER_BANNED" in outcomes  # the plays were under way when the ban came
    assert "OK" in outcomes
    items = await scan_items(one.db)
    assert _entries_of(items, "ann") == []
    accepted = [i for i in items if SESSION.holds(i) and i["playerId"] == "ann"]
    assert len(accepted) == outcomes.count("OK")
    after = await one.submit("ann", "r1", 99)
    assert [e["code"] for e in after["errors"]] == ["PLAYER_BANNED"]
    assert await check_table(one.db.client, one.db.table) == []


@each_layout
async def test_the_index_and_count_agree_after_a_ban_and_an_unban(indexed: Indexed) -> None:
    api = indexed.api
    boards = await _boards(api, 3, players=("ann", "bob", "cat"))
    await indexed.projector.drain()
    await ban(api, "bob")
    await indexed.projector.drain()
    for board_id in boards:
        verification = await indexed.index.verify(api.db, board_id)
        assert verification.ok, verification
        assert verification.entries == 2
    await unban(api, "bob")
    assert (await api.submit("bob", boards[0], 1000))["errors"] == []
    await indexed.projector.drain()
    board = await get_leaderboard(api.db, boards[0])
    assert board is not None
    entries = [ScoreItem.model_validate(i) for i in await scan_items(api.db) if holds_score(i)]
    entries = [e for e in entries if e.leaderboard_id == boards[0]]
    from_index = await indexed.index.better_counts(board, entries)
    assert from_index == await ranks.better_counts(api.db, board, entries)
    assert sorted(from_index.values()) == [0, 1, 2]
    assert (await indexed.index.verify(api.db, boards[0])).ok
