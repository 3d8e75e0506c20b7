"""Erasure: everything the table holds about a player is deleted, through GraphQL against
DynamoDB Local, and a scan of the table finds no trace of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dynamo import erasure
from dynamo.erasure import ERASED_REASON, REDACTED, count_player_items, erase_player
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.ids import new_session_id
from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, get_leaderboard
from dynamo.moderation import MODERATION, ModerationAction, new_action
from dynamo.players import PLAYER
from dynamo.sessions import SESSION, SessionItem
from edge.auth import fingerprint
from leaderboard.config import Settings
from soak.invariants import check_table
from tests.conftest import ADMIN_KEYS, API_KEYS, Api, Indexed, _serve, each_layout
from tests.scan import scan_items
from tests.test_bans import ban, unban
from tests.test_moderation import _remove

ADMIN = ADMIN_KEYS[0]
ERIN = "erin-4f2c"
"""The player erased: an id found nowhere else, so that a scan can look for it."""
ERIN_NAME = "Erin Vasquez"
ERIN_EMAIL = f"{ERIN}@x.example"
ERIN_TRACES = (ERIN, ERIN_NAME, ERIN_EMAIL)
"""What names the player: none of it may be left anywhere once it is erased."""

ERASE = """mutation($i: ErasePlayerInput!) { erasePlayer(input: $i) {
    complete
    erased { entries sessions playRecords otherItems moderationRecords }
    action { action actor reason playerId removedCount removed { leaderboardId } }
    errors { code message field } } }"""


async def erase(
    api: Api, player: str = ERIN, key: str | None = ADMIN, **fields: Any
) -> dict[str, Any]:
    return await api.raw(ERASE, {"i": {"playerId": player, **fields}}, key=key)


async def erase_fully(
    api: Api, player: str = ERIN, most: int = 20, **fields: Any
) -> list[dict[str, Any]]:
    """Send the erasure until it is complete; every answer, in order."""
    answers = []
    for _ in range(most):
        payload = (await erase(api, player, **fields))["data"]["erasePlayer"]
        assert payload["errors"] == [], payload
        answers.append(payload)
        if payload["complete"]:
            return answers
    raise AssertionError(f"not complete after {most} calls: {answers[-1]}")


def traces(items: list[dict[str, Any]], *needles: str) -> list[dict[str, Any]]:
    """The items holding any of ``needles`` anywhere in a key or a value."""

    def text(value: Any) -> str:
        if isinstance(value, dict):
            return " ".join(f"{k} {text(v)}" for k, v in value.items())
        if isinstance(value, list):
            return " ".join(text(v) for v in value)
        return str(value)

    return [i for i in items if any(n.casefold() in text(i).casefold() for n in needles)]


async def _sessions(api: Api, player: str, count: int, boards: list[str]) -> None:
    """``count`` sessions of the player on ``boards``, written straight into the table (as
    that many plays would leave them, their entries aside)."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        SESSION.item(
            SessionItem(
                session_id=new_session_id(),
                player_id=player,
                game_id="g",
                score=1,
                played_at=start + timedelta(seconds=i),
                leaderboard_id=boards[i % len(boards)],
                leaderboard_ids=[boards[i % len(boards)]],
            )
        )
        for i in range(count)
    ]
    for first in range(0, len(items), 25):
        requests: Any = [{"PutRequest": {"Item": serialize(i)}} for i in items[first : first + 25]]
        while requests:
            answer = await api.db.client.batch_write_item(RequestItems={api.db.table: requests})
            requests = answer.get("UnprocessedItems", {}).get(api.db.table, [])


async def _player_on_boards(api: Api, boards: list[str]) -> None:
    """ERIN and bob with an entry on every board (ERIN the better), some plays idempotent."""
    await api.create_player(ERIN, ERIN_NAME)
    await api.create_player("bob")
    for board in boards:
        await api.create_board(board)
    for start in range(0, len(boards), 20):
        chunk = boards[start : start + 20]
        for p, score in ((ERIN, 90), ("bob", 80)):
            payload = await api.gql(
                """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
                    errors { code } } }""",
                {
                    "i": {
                        "playerId": p,
                        "gameId": "g",
                        "score": score,
                        "leaderboardIds": chunk,
                        "submissionId": new_session_id(),
                    }
                },
            )
            assert payload["submitScore"]["errors"] == []


async def test_erasure_needs_an_admin_key_and_writes_nothing_without_one(api: Api) -> None:
    await _player_on_boards(api, ["b0"])
    before = await scan_items(api.db)
    for key, code in ((None, "UNAUTHENTICATED"), (API_KEYS[0], "FORBIDDEN")):
        body = await erase(api, key=key)
        assert body["data"] is None
        assert [e["extensions"]["code"] for e in body["errors"]] == [code]
    for player, reason, code, field in (
        ("nobody", None, "PLAYER_NOT_FOUND", "playerId"),
        ("a#b", None, "INVALID_ID", "playerId"),
        (ERIN, " ", "INVALID_ARGUMENT", "reason"),
    ):
        fields = {} if reason is None else {"reason": reason}
        payload = (await erase(api, player, **fields))["data"]["erasePlayer"]
        assert [(e["code"], e["field"]) for e in payload["errors"]] == [(code, field)]
        assert payload["complete"] is False
    assert await scan_items(api.db) == before


SESSIONS = 1500
"""Sessions of the player in the largest erasure: fifteen pages of the player's partition."""


@each_layout
@pytest.mark.slow
async def test_a_player_with_many_pages_of_sessions_on_fifty_boards_is_erased_completely(
    api: Api,
) -> None:
    boards = [f"b{i:02d}" for i in range(50)]
    await _player_on_boards(api, boards)
    await _sessions(api, ERIN, SESSIONS, boards)
    # Moderation records that name the player: a removal whose reason quotes its id.
    assert (await _remove(api, "b00", ERIN, reason=f"{ERIN} used a trainer"))["data"][
        "removeEntry"
    ]["errors"] == []
    assert await count_player_items(api.db, ERIN) == SESSIONS + 3 + 50 + 3  # sessions, records...
    before = await scan_items(api.db)
    assert traces(before, ERIN)

    api.reset_calls()
    answers = await erase_fully(api)
    calls = api.calls
    totals = {
        k: sum(a["erased"][k] for a in answers)
        for k in ("entries", "sessions", "playRecords", "otherItems", "moderationRecords")
    }
    # 49 entries standing (one was removed before), SESSIONS + 3 sessions, 3 play records, the
    # removed entry's tombstone, and the removal's record.
    assert totals == {
        "entries": 49,
        "sessions": SESSIONS + 3,
        "playRecords": 3,
        "otherItems": 1,
        "moderationRecords": 1,
    }
    action = answers[-1]["action"]
    assert action == {
        "action": "ERASE_PLAYER",
        "actor": fingerprint(ADMIN),
        "reason": ERASED_REASON,
        "playerId": None,
        "removedCount": 49,
        "removed": [],
    }
    # Bounded: the partition read in pages of 100, deleted in batches of at most 25 (a
    # page's last batch may be short), 49 entries in transactions of at most 25, then the
    # last one.
    pages = -(-(SESSIONS + 56 + 1) // 100)
    assert calls["Query"] >= pages
    deleted = SESSIONS + 3 + 3 + 1  # sessions, play records, the tombstone
    assert -(-deleted // 25) <= calls["BatchWriteItem"] <= -(-deleted // 25) + pages
    assert calls["TransactWriteItems"] == 2 + 1

    items = await scan_items(api.db)
    assert traces(items, *ERIN_TRACES) == []
    erased = [i for i in items if MODERATION.holds(i) and i["action"] == "ERASE_PLAYER"]
    assert len(erased) == 1
    removal = next(i for i in items if MODERATION.holds(i) and i["action"] == "REMOVE_ENTRY")
    assert removal["reason"] == REDACTED
    assert "playerId" not in removal
    for board_id in boards:
        board = await get_leaderboard(api.db, board_id)
        assert board is not None
        assert board.entry_count == 1, board_id
    data = await api.gql(
        f'{{ player(id: "{ERIN}") {{ id }} leaderboard(id: "b01") {{ topScores(first: 5) '
        "{ edges { node { player { id } } } } } }"
    )
    assert data["player"] is None
    assert [e["node"]["player"]["id"] for e in data["leaderboard"]["topScores"]["edges"]] == ["bob"]
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []

    # Done: the player is unknown now, and its id and address are free again.
    again = (await erase(api))["data"]["erasePlayer"]
    assert [e["code"] for e in again["errors"]] == ["PLAYER_NOT_FOUND"]
    await api.create_player(ERIN)
    assert (await api.submit(ERIN, "b01", 5))["errors"] == []


@pytest.fixture
async def frugal(settings: Settings, graphiql_assets: Path) -> AsyncIterator[Api]:
    """A service whose requests may make 60 database calls each."""
    frugal = replace(settings, limits=replace(settings.limits, max_dynamodb_calls=60))
    async with _serve(frugal, graphiql_assets) as served:
        yield served


@pytest.mark.slow
async def test_an_erasure_stops_within_its_budget_and_goes_on_when_sent_again(
    frugal: Api,
) -> None:
    boards = [f"b{i}" for i in range(3)]
    await _player_on_boards(frugal, boards)
    await _sessions(frugal, ERIN, 600, boards)
    answers = await erase_fully(frugal)
    assert [a["complete"] for a in answers[:-1]] == [False] * (len(answers) - 1)
    assert len(answers) >= 2
    assert sum(a["erased"]["sessions"] for a in answers) == 601
    assert traces(await scan_items(frugal.db), *ERIN_TRACES) == []
    assert await check_table(frugal.db.client, frugal.db.table, single_writer=True) == []


@each_layout
async def test_an_erasure_of_a_banned_player_and_plays_during_it(api: Api) -> None:
    await _player_on_boards(api, ["b0", "b1"])
    assert (await ban(api, ERIN, reason="cheated"))["data"]["banPlayer"]["errors"] == []
    answers = await erase_fully(api)
    assert sum(a["erased"]["entries"] for a in answers) == 0  # the ban took them
    assert sum(a["erased"]["moderationRecords"] for a in answers) == 1
    items = await scan_items(api.db)
    assert traces(items, *ERIN_TRACES) == []
    ban_record = next(i for i in items if MODERATION.holds(i) and i["action"] == "BAN_PLAYER")
    assert ban_record["reason"] == "cheated"
    refused = await api.submit(ERIN, "b0", 1)
    assert [e["code"] for e in refused["errors"]] == ["PLAYER_NOT_FOUND"]
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []


@each_layout
async def test_the_rank_index_forgets_an_erased_player(indexed: Indexed) -> None:
    api = indexed.api
    await _player_on_boards(api, ["b0"])
    await indexed.projector.drain()
    await erase_fully(api)
    await indexed.projector.drain()
    keys = await indexed.index.redis.keys("*")
    for key in keys:
        kind = await indexed.index.redis.type(key)
        if kind in (b"hash", "hash"):
            assert ERIN.encode() not in await indexed.index.redis.hkeys(key)
        if kind in (b"zset", "zset"):
            members = await indexed.index.redis.zrange(key, 0, -1)
            assert not [m for m in members if ERIN.encode() in m]
    verification = await indexed.index.verify(api.db, "b0")
    assert verification.ok
    assert verification.entries == 1


@each_layout
async def test_lists_leave_out_the_rows_of_a_player_erased_while_they_were_read(
    api: Api,
) -> None:
    """An erasure deletes the Player item last: a list read just before it finished can hold
    an entry or a session whose player is gone when the players are read. Deleting only the
    Player item leaves the table as such a list saw it. Lists that read players leave those
    rows out; a player field that finds its player gone answers PLAYER_NOT_FOUND. A page of
    entries that asks only for its players' ids and names reads no player (each entry holds
    its player's name): it shows the board as it stood, the entry the erasure had not yet
    taken off included."""
    await _player_on_boards(api, ["b0"])
    await api.create_player("carl")
    await api.gql(
        """mutation($i: SubmitScoreInput!) { submitScore(input: $i) { errors { code } } }""",
        {"i": {"playerId": "carl", "gameId": "g", "score": 70, "leaderboardIds": ["b0"]}},
    )
    await api.db.client.delete_item(
        TableName=api.db.table, Key=serialize(PLAYER.key_attributes(player_id=ERIN))
    )
    named = await api.gql(
        """{ leaderboard(id: "b0") { topScores(first: 2) {
            edges { node { score player { id name } } } } } }"""
    )
    assert [e["node"]["player"]["id"] for e in named["leaderboard"]["topScores"]["edges"]] == [
        ERIN,
        "bob",
    ]
    top = await api.gql(
        """{ leaderboard(id: "b0") { topScores(first: 2) {
            edges { node { score player { id gamesPlayed } } }
            pageInfo { hasNextPage endCursor } } } }"""
    )
    scores = top["leaderboard"]["topScores"]
    assert [e["node"] for e in scores["edges"]] == [
        {"score": 80, "player": {"id": "bob", "gamesPlayed": 1}}
    ]
    # The next page begins after the last entry read, the one left out included.
    after = await api.gql(
        """query($a: String!) { leaderboard(id: "b0") { topScores(first: 2, after: $a) {
            edges { node { score } } } } }""",
        {"a": scores["pageInfo"]["endCursor"]},
    )
    assert [e["node"]["score"] for e in after["leaderboard"]["topScores"]["edges"]] == [70]
    without = await api.gql('{ leaderboard(id: "b0") { topScores { edges { node { score } } } } }')
    assert [e["node"]["score"] for e in without["leaderboard"]["topScores"]["edges"]] == [
        90,
        80,
        70,
    ]
    around = await api.gql(
        """{ leaderboard(id: "b0") { around(playerId: "bob", before: 1, after: 1) {
            rank score { player { id } } } } }"""
    )
    assert [(r["rank"], r["score"]["player"]["id"]) for r in around["leaderboard"]["around"]] == [
        (2, "bob"),
        (3, "carl"),
    ]
    sessions = await api.gql(
        '{ gameSessions(gameId: "g") { edges { node { score player { id } } } } }'
    )
    assert sorted(e["node"]["player"]["id"] for e in sessions["gameSessions"]["edges"]) == [
        "bob",
        "carl",
    ]
    # Reached another way, the player field answers a typed error, not an internal one.
    body = await api.raw(
        """{ leaderboard(id: "b0") {
            rankOf(playerId: "erin-4f2c") { score { player { id } } } } }"""
    )
    assert [e["extensions"]["code"] for e in body["errors"]] == ["PLAYER_NOT_FOUND"], body


async def test_an_entry_whose_board_is_gone_answers_a_typed_error(api: Api) -> None:
    """TTL deletes an expired board's items in no particular order: the board item can go
    before its entries. Asked for, such an entry's board is LEADERBOARD_NOT_FOUND."""
    await _player_on_boards(api, ["b0", "b1"])
    await api.db.client.delete_item(
        TableName=api.db.table, Key=serialize(LEADERBOARD.key_attributes(leaderboard_id="b1"))
    )
    body = await api.raw(
        f'{{ player(id: "{ERIN}") {{ scores {{ edges {{ node {{ leaderboard {{ id }} }} }} }} }} }}'
    )
    assert [e["extensions"]["code"] for e in body["errors"]] == ["LEADERBOARD_NOT_FOUND"], body


NAMED = "gdprNamed4w"
NAMED_NAME = "Wren Okafor"
NAMED_EMAIL = "named4w.person@example.net"


async def _create(api: Api, player: str, name: str, email: str) -> None:
    data = await api.gql(
        """mutation($i: CreatePlayerInput!) { createPlayer(input: $i) {
            errors { code } } }""",
        {"i": {"id": player, "name": name, "email": email}},
    )
    assert data["createPlayer"]["errors"] == []


def _fullwidth(text: str) -> str:
    """``text`` in fullwidth letters, digits and signs (the same text once NFKC-normalised)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


async def test_a_reason_that_names_the_player_is_refused_and_changes_nothing(api: Api) -> None:
    await _create(api, NAMED, NAMED_NAME, NAMED_EMAIL)
    await api.create_player("bob")
    await api.create_board("b0")
    assert (await api.submit(NAMED, "b0", 50))["errors"] == []
    before = await scan_items(api.db)
    for reason, holds in (
        (f"erased at the request of {NAMED_EMAIL} (player {NAMED})", "id"),
        ("asked for by GDPRNAMED4W.", "id"),
        (f"asked for by {_fullwidth(NAMED)}", "id"),
        (f"asked for by {NAMED_NAME}", "name"),
        ("wren   OKAFOR wrote to support", "name"),
        (f"asked for by {NAMED_EMAIL}", "e-mail address"),
        ("asked for by <Named4W.Person@Example.NET.>", "e-mail address"),
        (f"asked for by {_fullwidth(NAMED_EMAIL)}", "e-mail address"),
        ("named4w.person wrote to support", "e-mail address"),  # the local part alone
    ):
        payload = (await erase(api, NAMED, reason=reason))["data"]["erasePlayer"]
        assert [(e["code"], e["field"]) for e in payload["errors"]] == [
            ("INVALID_ARGUMENT", "reason")
        ], reason
        message = payload["errors"][0]["message"]
        assert f"the player's {holds}" in message, (reason, message)
        assert "named4w" not in message.casefold()  # the message does not repeat it
        assert "wren" not in message.casefold()
        assert (payload["complete"], payload["erased"], payload["action"]) == (False, None, None)
    # The operators' command passes its reason on as typed: invisible characters too.
    with pytest.raises(LeaderboardError) as refused:
        await erase_player(
            api.db, player_id=NAMED, actor="cli", reason="from named4w\u200b.person@example.net"
        )
    assert refused.value.code is ErrorCode.INVALID_ARGUMENT
    assert refused.value.subject is Subject.REASON
    assert await scan_items(api.db) == before
    assert (await api.submit(NAMED, "b0", 60))["errors"] == []  # not being erased

    # Other players may be named.
    answers = await erase_fully(api, NAMED, reason="ticket 4711: a second account of bob")
    assert answers[-1]["action"]["reason"] == "ticket 4711: a second account of bob"
    assert traces(await scan_items(api.db), NAMED, NAMED_NAME, NAMED_EMAIL) == []


async def test_names_and_ids_are_found_as_whole_words_only(api: Api) -> None:
    """A name that is a common word or a single letter names the player wherever it stands as
    a word of its own, and nowhere else; so does an id."""
    for player, name in (("p-the", "the"), ("p-al", "Al"), ("p-data", "data"), ("erin", "E")):
        await _create(api, player, name, f"{player}@x.example")
    refused = [
        ("p-the", "erased at the request of the holder"),
        ("p-al", "Al's second account"),
        ("erin", "ERIN asked for it."),
        ("erin", "plan E"),
    ]
    for player, reason in refused:
        payload = (await erase(api, player, reason=reason))["data"]["erasePlayer"]
        assert [e["field"] for e in payload["errors"]] == ["reason"], (player, reason)
    accepted: list[tuple[str, str | None]] = [
        ("p-al", "also asked for by mail"),
        ("erin", f"a second account of {ERIN}; see Erinna's ticket"),  # another player's id
        ("p-the", None),  # the default text holds "the" and names no one
        ("p-data", None),
    ]
    for player, given in accepted:
        fields: dict[str, Any] = {} if given is None else {"reason": given}
        answers = await erase_fully(api, player, **fields)
        assert answers[-1]["action"]["reason"] == (given or ERASED_REASON)


@each_layout
async def test_an_erasure_leaves_nothing_that_names_the_player(api: Api) -> None:
    await _player_on_boards(api, ["b0", "b1", "b2"])
    await api.create_player("carl")
    metadata = {"nick": ERIN_NAME, "contact": ERIN_EMAIL}
    payload = await api.gql(
        """mutation($i: SubmitScoreInput!) { submitScore(input: $i) { errors { code } } }""",
        {
            "i": {
                "playerId": ERIN,
                "gameId": "g",
                "score": 95,
                "leaderboardIds": ["b0", "b1"],
                "submissionId": new_session_id(),
                "metadata": metadata,
            }
        },
    )
    assert payload["submitScore"]["errors"] == []
    # Actions on the player, their reasons naming it in every way.
    assert (await _remove(api, "b2", ERIN, reason=f"{ERIN_NAME} used a trainer"))["data"][
        "removeEntry"
    ]["errors"] == []
    assert (await ban(api, ERIN, reason=f"reported by {ERIN_EMAIL.upper()}"))["data"]["banPlayer"][
        "errors"
    ] == []
    assert (await unban(api, ERIN, reason="appeal by erin vasquez"))["data"]["unbanPlayer"][
        "errors"
    ] == []
    # Actions on other players whose reasons name it by id or address, or by name only.
    assert (await _remove(api, "b0", "bob", reason=f"colluded with {ERIN.upper()}"))["data"][
        "removeEntry"
    ]["errors"] == []
    assert (await ban(api, "bob", reason=f"alt account of <{ERIN_EMAIL.title()}>"))["data"][
        "banPlayer"
    ]["errors"] == []
    assert (await unban(api, "bob", reason=f"appeal upheld; {ERIN_NAME} vouched"))["data"][
        "unbanPlayer"
    ]["errors"] == []
    assert (await erase(api, "carl", reason=f"a second account of {ERIN}"))["data"]["erasePlayer"][
        "errors"
    ] == []
    before = await scan_items(api.db)
    assert all(traces(before, t) for t in ERIN_TRACES)

    answers = await erase_fully(api, reason="ticket 4711: a second account of bob")
    assert sum(a["erased"]["moderationRecords"] for a in answers) == 3 + 3

    items = await scan_items(api.db)
    assert traces(items, ERIN, ERIN_EMAIL) == []
    # A name is no identifier: in a record about someone else it is left as it was.
    [kept] = traces(items, ERIN_NAME)
    assert (kept["action"], kept["playerId"]) == ("UNBAN_PLAYER", "bob")
    records = [i for i in items if MODERATION.holds(i)]
    reasons = {(r["action"], r.get("playerId"), r["reason"]) for r in records}
    assert reasons == {
        ("REMOVE_ENTRY", None, REDACTED),
        ("BAN_PLAYER", None, REDACTED),
        ("UNBAN_PLAYER", None, REDACTED),
        ("REMOVE_ENTRY", "bob", REDACTED),
        ("BAN_PLAYER", "bob", REDACTED),
        ("UNBAN_PLAYER", "bob", f"appeal upheld; {ERIN_NAME} vouched"),
        ("ERASE_PLAYER", None, REDACTED),
        ("ERASE_PLAYER", None, "ticket 4711: a second account of bob"),
    }
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []


async def _name_in_log(api: Api, player: str, count: int) -> None:
    """``count`` removals of other players' entries in the log, the last ten naming
    ``player`` by id (written straight into the table)."""
    requests: Any = []
    for i in range(count):
        reason = f"an alt of {player}" if i >= count - 10 else f"reason {i}"
        action = new_action(
            ModerationAction.REMOVE_ENTRY, actor="a", reason=reason, player_id=f"other-{i}"
        )
        requests.append({"PutRequest": {"Item": serialize(MODERATION.item(action))}})
    for first in range(0, len(requests), 25):
        await api.db.client.batch_write_item(
            RequestItems={api.db.table: requests[first : first + 25]}
        )


async def test_an_erasure_searches_a_log_too_long_for_one_request_in_several(
    frugal: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each call searches the log from where the last one stopped: a log that takes more reads
    than one request may make is searched all the same."""
    monkeypatch.setattr(erasure, "LOG_PAGE", 2)
    await _player_on_boards(frugal, ["b0"])
    await _name_in_log(frugal, ERIN, 60)  # 30 reads, one request affords under 20
    answers = await erase_fully(frugal, reason="ticket 4711")
    assert len(answers) >= 2
    assert sum(a["erased"]["moderationRecords"] for a in answers) == 10
    assert answers[-1]["action"]["reason"] == "ticket 4711"
    items = await scan_items(frugal.db)
    assert traces(items, *ERIN_TRACES) == []
    assert len([i for i in items if MODERATION.holds(i) and i["reason"] == REDACTED]) == 10


async def test_a_resumed_erasure_checks_each_reason_and_records_the_last(frugal: Api) -> None:
    await _player_on_boards(frugal, ["b0", "b1"])
    await _sessions(frugal, ERIN, 300, ["b0", "b1"])
    first = (await erase(frugal, reason="ticket 4711"))["data"]["erasePlayer"]
    assert first["errors"] == []
    assert first["complete"] is False
    partway = await scan_items(frugal.db)
    refused = (await erase(frugal, reason=f"ticket 4711 for {ERIN_NAME}"))["data"]["erasePlayer"]
    assert [(e["code"], e["field"]) for e in refused["errors"]] == [("INVALID_ARGUMENT", "reason")]
    assert await scan_items(frugal.db) == partway
    answers = await erase_fully(frugal, reason="ticket 4711, closed")
    assert answers[-1]["action"]["reason"] == "ticket 4711, closed"
    assert traces(await scan_items(frugal.db), *ERIN_TRACES) == []
