"""Moderation: admin keys, removing an entry, and the moderation log, through GraphQL."""

from __future__ import annotations

from typing import Any

import pytest

from dynamo import ranks
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.items import serialize
from dynamo.leaderboards import get_leaderboard
from dynamo.moderation import MODERATION
from dynamo.scores import ScoreItem, holds_score, score_item
from edge.auth import ApiKeys, fingerprint
from resolvers.context import Role
from soak.invariants import Kind, check_table
from tests.conftest import ADMIN_KEYS, API_KEYS, Api, Indexed, each_layout
from tests.scan import scan_items
from tests.test_subscriptions import WATCH, _next, _subscribed

ADMIN = ADMIN_KEYS[0]

REMOVE = """mutation($i: RemoveEntryInput!) { removeEntry(input: $i) {
    removed { leaderboardId score attainedAt }
    action { id at actor action reason leaderboardId playerId removed { score } }
    errors { code message field } } }"""

LOG = """query($first: Int, $after: String, $board: ID, $player: ID) {
    moderationLog(first: $first, after: $after, leaderboardId: $board, playerId: $player) {
      edges { cursor node { id action reason leaderboardId playerId actor
        removed { leaderboardId score } } }
      pageInfo { hasNextPage endCursor } } }"""


async def _remove(
    api: Api, board: str, player: str, reason: str = "cheated", key: str | None = ADMIN
) -> dict[str, Any]:
    return await api.raw(
        REMOVE, {"i": {"leaderboardId": board, "playerId": player, "reason": reason}}, key=key
    )


async def _board(api: Api, board: str = "b", *, new: bool = True, **fields: Any) -> None:
    """A board with ann 90, bob 80 and cat 70 on it (the players made first when ``new``)."""
    for p in ("ann", "bob", "cat") if new else ():
        await api.create_player(p)
    await api.create_board(board, **fields)
    for p, s in (("ann", 90), ("bob", 80), ("cat", 70)):
        assert (await api.submit(p, board, s))["errors"] == []


async def _top(api: Api, board: str = "b") -> list[tuple[str, int, int]]:
    data = await api.gql(
        f'{{ leaderboard(id: "{board}") {{ entryCount topScores(first: 10) {{ edges {{ node {{'
        " score rank player { id } } } } } }"
    )
    edges = data["leaderboard"]["topScores"]["edges"]
    return [(e["node"]["player"]["id"], e["node"]["score"], e["node"]["rank"]) for e in edges]


def test_a_key_is_of_one_kind_and_named_by_its_fingerprint() -> None:
    keys = ApiKeys(["game"], ["admin"])
    assert keys.caller("Bearer game").role is Role.GAME_SERVER
    assert keys.caller("Bearer admin").role is Role.ADMIN
    assert keys.caller("Bearer admin").actor == fingerprint("admin")
    assert keys.caller("Bearer nope").role is Role.ANONYMOUS
    assert keys.caller(None).actor is None
    assert "admin" not in fingerprint("admin")
    assert len(fingerprint("admin")) == 12
    # An admin key is also good for everything a game-server key is.
    assert keys.caller("Bearer admin").role is not Role.ANONYMOUS
    assert keys.caller("Bearer game").role is not Role.ANONYMOUS


async def test_remove_entry_needs_an_admin_key_and_writes_nothing_without_one(api: Api) -> None:
    await _board(api)
    before = await scan_items(api.db)
    for key, code in ((None, "UNAUTHENTICATED"), (API_KEYS[0], "FORBIDDEN")):
        body = await _remove(api, "b", "ann", key=key)
        assert body["data"] is None
        assert [e["extensions"]["code"] for e in body["errors"]] == [code]
        log = await api.raw(LOG, {}, key=key)
        assert [e["extensions"]["code"] for e in log["errors"]] == [code]
    assert await scan_items(api.db) == before


@each_layout
async def test_removing_an_entry_takes_it_off_the_board_in_one_transaction(api: Api) -> None:
    await _board(api)
    api.reset_calls()
    body = await _remove(api, "b", "ann", reason="  aimbot  ")
    payload = body["data"]["removeEntry"]
    assert payload["errors"] == []
    assert payload["removed"]["leaderboardId"] == "b"
    assert payload["removed"]["score"] == 90
    action = payload["action"]
    assert (action["action"], action["reason"], action["playerId"]) == (
        "REMOVE_ENTRY",
        "aimbot",
        "ann",
    )
    assert action["actor"] == fingerprint(ADMIN)
    assert action["removed"] == [{"score": 90}]
    # One consistent read of the board and the guard, one transaction.
    assert api.calls == {"BatchGetItem": 1, "TransactWriteItems": 1}

    assert await _top(api) == [("bob", 80, 1), ("cat", 70, 2)]
    data = await api.gql(
        '{ leaderboard(id: "b") { entryCount } player(id: "ann") {'
        ' entry(leaderboardId: "b") { score } rank(leaderboardId: "b") { rank } '
        "lifetimeScore gamesPlayed } }"
    )
    assert data["leaderboard"]["entryCount"] == 2
    assert data["player"]["entry"] is None
    assert data["player"]["rank"] is None
    # The play itself stays recorded: only the entry left the board.
    assert (data["player"]["lifetimeScore"], data["player"]["gamesPlayed"]) == (90, 1)

    items = await scan_items(api.db)
    assert not [i for i in items if holds_score(i) and i["playerId"] == "ann"]
    guard = next(i for i in items if ENTRY_GUARD.holds(i) and i["playerId"] == "ann")
    assert guard["removed"] is True
    assert len([i for i in items if MODERATION.holds(i)]) == 1


@each_layout
async def test_a_removed_player_may_enter_again_and_is_counted_once(api: Api) -> None:
    await _board(api)
    assert (await _remove(api, "b", "ann"))["data"]["removeEntry"]["errors"] == []
    again = await api.submit("ann", "b", 10)
    assert again["errors"] == []
    assert again["improved"]
    assert await _top(api) == [("bob", 80, 1), ("cat", 70, 2), ("ann", 10, 3)]
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    assert board.entry_count == 3
    # and may be removed again
    assert (await _remove(api, "b", "ann"))["data"]["removeEntry"]["errors"] == []
    assert await _top(api) == [("bob", 80, 1), ("cat", 70, 2)]


async def test_removing_what_is_not_there_is_refused_and_writes_nothing(api: Api) -> None:
    await _board(api)
    await api.create_player("dan")
    before = await scan_items(api.db)
    cases = [
        ("b", "dan", "cheated", "ENTRY_NOT_FOUND", "playerId"),
        ("b", "nobody", "cheated", "ENTRY_NOT_FOUND", "playerId"),
        ("nope", "ann", "cheated", "LEADERBOARD_NOT_FOUND", "leaderboardId"),
        ("a#b", "ann", "cheated", "INVALID_ID", "leaderboardId"),
        ("b", "ann", "   ", "INVALID_ARGUMENT", "reason"),
        ("b", "ann", "x" * 501, "INVALID_ARGUMENT", "reason"),
    ]
    for board, player, reason, code, field in cases:
        payload = (await _remove(api, board, player, reason))["data"]["removeEntry"]
        assert [(e["code"], e["field"]) for e in payload["errors"]] == [(code, field)], payload
        assert payload["removed"] is None
        assert payload["action"] is None
    assert await scan_items(api.db) == before
    # Removed once, it is not there any more.
    assert (await _remove(api, "b", "ann"))["data"]["removeEntry"]["errors"] == []
    payload = (await _remove(api, "b", "ann"))["data"]["removeEntry"]
    assert [e["code"] for e in payload["errors"]] == ["ENTRY_NOT_FOUND"]


@each_layout
@pytest.mark.parametrize("operator", ["BEST", "LATEST", "INCREMENT"])
async def test_ranks_follow_a_removal_on_every_operator(api: Api, operator: str) -> None:
    await _board(api, operator=operator)
    await _remove(api, "b", "bob")
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    items = await scan_items(api.db)
    entries = [ScoreItem.model_validate(i) for i in items if holds_score(i)]
    counts = await ranks.better_counts(api.db, board, entries)
    assert sorted(counts.values()) == [0, 1]
    assert [p for p, _, _ in await _top(api)] == ["ann", "cat"]


@each_layout
async def test_the_index_and_count_agree_after_removals(indexed: Indexed) -> None:
    api = indexed.api
    await _board(api)
    await indexed.projector.drain()
    await _remove(api, "b", "ann")
    await indexed.projector.drain()
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    entries = [ScoreItem.model_validate(i) for i in await scan_items(api.db) if holds_score(i)]
    from_index = await indexed.index.better_counts(board, entries)
    from_count = await ranks.better_counts(api.db, board, entries)
    assert from_index == from_count
    assert sorted(from_count.values()) == [0, 1]
    # Entering again after the removal is seen by the index too (its versions continue).
    assert (await api.submit("ann", "b", 95))["errors"] == []
    await indexed.projector.drain()
    entries = [ScoreItem.model_validate(i) for i in await scan_items(api.db) if holds_score(i)]
    from_index = await indexed.index.better_counts(board, entries)
    assert from_index == await ranks.better_counts(api.db, board, entries)
    assert sorted(from_index.values()) == [0, 1, 2]
    # The index's total (its set's size) and the board's count (its shards) agree.
    data = await api.gql(
        '{ leaderboard(id: "b") { entryCount rankOf(playerId: "cat") { rank total } } }'
    )
    assert data["leaderboard"] == {"entryCount": 3, "rankOf": {"rank": 3, "total": 3}}
    assert await indexed.index.ranks({"b": [("cat", None)]}) is not None


@each_layout
async def test_a_subscriber_receives_the_new_top_after_a_removal(api: Api) -> None:
    await _board(api)
    async with _subscribed(api, WATCH) as ws:
        assert await _next(ws) == [("ann", 90, 1), ("bob", 80, 2), ("cat", 70, 3)]
        await _remove(api, "b", "ann")
        assert await _next(ws) == [("bob", 80, 1), ("cat", 70, 2)]


async def test_the_log_lists_actions_newest_first_by_board_and_player(api: Api) -> None:
    await _board(api)
    await _board(api, "c", new=False)
    await _remove(api, "b", "ann", reason="one")
    await _remove(api, "c", "ann", reason="two")
    await _remove(api, "b", "bob", reason="three")

    async def reasons(**args: Any) -> list[str]:
        body = await api.raw(LOG, args, key=ADMIN)
        assert "errors" not in body, body
        return [e["node"]["reason"] for e in body["data"]["moderationLog"]["edges"]]

    assert await reasons() == ["three", "two", "one"]
    assert await reasons(board="b") == ["three", "one"]
    assert await reasons(player="ann") == ["two", "one"]
    assert await reasons(board="b", player="ann") == ["one"]
    assert await reasons(board="c", player="bob") == []

    first = (await api.raw(LOG, {"first": 2}, key=ADMIN))["data"]["moderationLog"]
    assert first["pageInfo"]["hasNextPage"]
    rest = await api.raw(LOG, {"first": 2, "after": first["pageInfo"]["endCursor"]}, key=ADMIN)
    assert [e["node"]["reason"] for e in rest["data"]["moderationLog"]["edges"]] == ["one"]
    forged = await api.raw(LOG, {"after": "forged"}, key=ADMIN)
    assert [e["extensions"]["code"] for e in forged["errors"]] == ["INVALID_CURSOR"]


@each_layout
@pytest.mark.parametrize("operator", ["BEST", "LATEST", "INCREMENT"])
async def test_the_table_invariants_hold_across_removals_and_new_entries(
    api: Api, operator: str
) -> None:
    await _board(api, operator=operator)
    await _remove(api, "b", "ann")
    await _remove(api, "b", "bob")
    assert (await api.submit("bob", "b", 5))["errors"] == []
    assert (await api.submit("bob", "b", 7))["errors"] == []
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []
    # A Score item left beside a tombstone is caught.
    items = await scan_items(api.db)
    guard = next(i for i in items if ENTRY_GUARD.holds(i) and i["playerId"] == "ann")
    stale = ScoreItem(
        leaderboard_id="b",
        player_id="ann",
        score=guard["score"],
        attained_at=guard["attainedAt"],
        session_id=guard["sessionId"],
        version=guard["version"],
    )
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    await api.db.client.put_item(
        TableName=api.db.table,
        Item=serialize(score_item(board, stale)),
    )
    found = await check_table(api.db.client, api.db.table, single_writer=True)
    assert {v.kind for v in found} >= {Kind.UNEXPECTED_ENTRY}


async def test_a_rank_the_index_gives_of_an_entry_just_removed_is_a_typed_error(
    indexed: Indexed,
) -> None:
    api = indexed.api
    await _board(api)
    await indexed.projector.drain()
    await _remove(api, "b", "ann")
    # The index has not read the removal yet: it still ranks ann; the table no longer has her
    # entry. The rank is refused as of an entry removed, never an internal error.
    body = await api.raw(
        '{ player(id: "ann") { rank(leaderboardId: "b") { rank score { score } } } }'
    )
    assert body["data"] == {"player": {"rank": None}}
    assert [e["extensions"]["code"] for e in body["errors"]] == ["ENTRY_NOT_FOUND"]
    await indexed.projector.drain()
    data = await api.gql('{ player(id: "ann") { rank(leaderboardId: "b") { rank } } }')
    assert data["player"]["rank"] is None
