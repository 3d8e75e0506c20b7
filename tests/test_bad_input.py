"""Client mistakes: each a typed error, never a 500, and nothing written."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.conftest import Api, each_layout
from tests.scan import scan_items

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    improved session { id } errors { code message field } } }"""


@pytest.fixture
async def ready(api: Api) -> Api:
    await api.create_player("alice")
    await api.create_board("global", scoreWidth=4)
    await api.submit("alice", "global", 10)
    return api


def _submission(**overrides: Any) -> dict[str, Any]:
    return {
        "i": {
            "playerId": "alice",
            "leaderboardId": "global",
            "gameId": "g",
            "score": 5,
            **overrides,
        }
    }


async def _unchanged(api: Api, before: list[dict[str, Any]]) -> None:
    after = await scan_items(api.db)
    key = lambda i: (i["pk"], i["sk"])  # noqa: E731
    assert sorted(after, key=key) == sorted(before, key=key)


@pytest.mark.parametrize(
    ("overrides", "code", "field"),
    [
        ({"playerId": "al#ice"}, "INVALID_ID", "playerId"),
        ({"playerId": "al ice"}, "INVALID_ID", "playerId"),
        ({"leaderboardId": "board#x"}, "INVALID_ID", "leaderboardId"),
        ({"gameId": "g" * 65}, "INVALID_ID", "gameId"),
        ({"gameId": ""}, "INVALID_ID", "gameId"),
        ({"score": 10_000}, "SCORE_OUT_OF_RANGE", "score"),
        ({"playerId": "bob"}, "PLAYER_NOT_FOUND", "playerId"),
        ({"leaderboardId": "nope"}, "LEADERBOARD_NOT_FOUND", "leaderboardId"),
        ({"durationSec": -1}, "INVALID_ARGUMENT", "durationSec"),
    ],
)
async def test_bad_submissions_are_typed_errors_and_write_nothing(
    ready: Api, overrides: dict[str, Any], code: str, field: str
) -> None:
    before = await scan_items(ready.db)
    payload = (await ready.gql(SUBMIT, _submission(**overrides)))["submitScore"]
    assert payload["session"] is None
    assert payload["improved"] is False
    assert [(e["code"], e["field"]) for e in payload["errors"]] == [(code, field)]
    assert payload["errors"][0]["message"]
    await _unchanged(ready, before)


@pytest.mark.parametrize("score", [-1, 10**15, 1.5, "12", True])
async def test_scores_that_are_not_a_long_are_rejected_before_execution(
    ready: Api, score: Any
) -> None:
    before = await scan_items(ready.db)
    body = await ready.raw(SUBMIT, _submission(score=score))
    assert body.get("data") is None
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
    assert "Long" in body["errors"][0]["message"] or "Variable" in body["errors"][0]["message"]
    await _unchanged(ready, before)


async def test_negative_score_literal_fails_validation(ready: Api) -> None:
    body = await ready.raw(
        'mutation { submitScore(input: {playerId: "alice", leaderboardId: "global", '
        'gameId: "g", score: -5}) { improved } }'
    )
    assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


@pytest.mark.parametrize(
    ("starts", "ends"),
    [(None, timedelta(seconds=-1)), (timedelta(hours=1), None)],
    ids=["ended", "not-started"],
)
async def test_closed_board_refuses_scores(
    api: Api, starts: timedelta | None, ends: timedelta | None
) -> None:
    await api.create_player("alice")
    now = datetime.now(UTC)
    window: dict[str, str] = {}
    if starts is not None:
        window["startsAt"] = (now + starts).isoformat()
    if ends is not None:
        window["startsAt"] = (now - timedelta(days=1)).isoformat()
        window["endsAt"] = (now + ends).isoformat()
    await api.create_board("closed", **window)
    before = await scan_items(api.db)
    payload = (await api.gql(SUBMIT, _submission(leaderboardId="closed")))["submitScore"]
    assert [e["code"] for e in payload["errors"]] == ["LEADERBOARD_CLOSED"]
    await _unchanged(api, before)


async def test_duplicate_player_and_taken_email(ready: Api) -> None:
    create = """mutation($i: CreatePlayerInput!) { createPlayer(input: $i) {
        player { id } errors { code field } } }"""
    before = await scan_items(ready.db)
    again = await ready.gql(create, {"i": {"id": "alice", "name": "A", "email": "new@example.com"}})
    taken = await ready.gql(create, {"i": {"id": "bob", "name": "B", "email": "ALICE@x.example"}})
    bad = await ready.gql(create, {"i": {"id": "carol", "name": "C", "email": "not-an-email"}})
    blank = await ready.gql(create, {"i": {"id": "dave", "name": "  ", "email": "d@example.com"}})
    assert again["createPlayer"] == {
        "player": None,
        "errors": [{"code": "PLAYER_EXISTS", "field": "id"}],
    }
    assert taken["createPlayer"]["errors"] == [{"code": "EMAIL_TAKEN", "field": "email"}]
    assert bad["createPlayer"]["errors"] == [{"code": "INVALID_EMAIL", "field": "email"}]
    assert blank["createPlayer"]["errors"] == [{"code": "INVALID_NAME", "field": "name"}]
    await _unchanged(ready, before)


async def test_bad_boards(ready: Api) -> None:
    create = """mutation($i: CreateLeaderboardInput!) { createLeaderboard(input: $i) {
        leaderboard { id } errors { code field } } }"""
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"id": "global"}, "LEADERBOARD_EXISTS", "id"),
        ({"id": "b#1"}, "INVALID_ID", "id"),
        ({"id": "wide", "scoreWidth": 16}, "INVALID_ARGUMENT", "scoreWidth"),
        ({"id": "narrow", "scoreWidth": 0}, "INVALID_ARGUMENT", "scoreWidth"),
        ({"id": "none", "partitions": 0}, "INVALID_ARGUMENT", "partitions"),
        ({"id": "odd", "partitions": 3}, "INVALID_ARGUMENT", "partitions"),
        ({"id": "many", "partitions": 128}, "INVALID_ARGUMENT", "partitions"),
        ({"id": "less", "partitions": -4}, "INVALID_ARGUMENT", "partitions"),
        (
            {
                "id": "backwards",
                "startsAt": "2026-02-01T00:00:00Z",
                "endsAt": "2026-01-01T00:00:00Z",
            },
            "INVALID_ARGUMENT",
            "endsAt",
        ),
    ]
    before = await scan_items(ready.db)
    for fields, code, field in cases:
        data = await ready.gql(create, {"i": {"name": "n", "period": "DAILY", **fields}})
        assert data["createLeaderboard"]["errors"] == [{"code": code, "field": field}], fields
    await _unchanged(ready, before)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ('{ player(id: "a#b") { id } }', "INVALID_ID"),
        ('{ leaderboard(id: "x y") { id } }', "INVALID_ID"),
        ('{ session(playerId: "alice", sessionId: "not-a-ulid") { id } }', "INVALID_ID"),
        ('{ playerByEmail(email: "nope") { id } }', "INVALID_EMAIL"),
        (
            '{ leaderboard(id: "global") { topScores(first: 100000) { edges { cursor } } } }',
            "INVALID_ARGUMENT",
        ),
        (
            '{ leaderboard(id: "global") { topScores(first: -1) { edges { cursor } } } }',
            "INVALID_ARGUMENT",
        ),
        (
            '{ leaderboard(id: "global") { topScores(after: "garbage") { edges { cursor } } } }',
            "INVALID_CURSOR",
        ),
        (
            '{ gameSessions(gameId: "g", after: "e30.AAAAAAAAAAAAAAAAAAAAAA") { edges { id: cursor'
            " } } }",
            "INVALID_CURSOR",
        ),
        ('{ player(id: "alice") { rank(leaderboardId: "#") { rank } } }', "INVALID_ID"),
    ],
)
async def test_bad_query_arguments_are_typed_errors(ready: Api, query: str, code: str) -> None:
    body = await ready.raw(query)
    assert [e["extensions"]["code"] for e in body["errors"]] == [code]
    assert "Traceback" not in str(body)


@each_layout
async def test_a_bad_argument_beside_a_shared_read_leaves_the_others_answered(
    ready: Api,
) -> None:
    """Two fields read one board's count (a write-sharded board's is a read of its own); the
    error of a page beside the first nulls that board, whose other fields graphql-core
    cancels, and the second board's count, waiting on the same read, is still answered."""
    body = await ready.raw(
        """{ first: leaderboard(id: "global") { entryCount
                topScores(after: "garbage") { edges { cursor } } }
             second: leaderboard(id: "global") { id entryCount } }"""
    )
    assert body["data"] == {"first": None, "second": {"id": "global", "entryCount": 1}}
    assert [e["extensions"]["code"] for e in body["errors"]] == ["INVALID_CURSOR"]


@each_layout
async def test_cursors_are_tamper_proof_and_bound_to_their_list(ready: Api) -> None:
    await ready.create_board("other")
    await ready.create_player("bob")
    await ready.submit("bob", "global", 20)
    await ready.submit("bob", "other", 20)
    page = await ready.gql(
        '{ leaderboard(id: "global") { topScores(first: 1) { pageInfo { endCursor } } } }'
    )
    cursor = page["leaderboard"]["topScores"]["pageInfo"]["endCursor"]
    query = """query($b: ID!, $c: String) { leaderboard(id: $b) { topScores(first: 1, after: $c) {
        edges { node { player { id } } } } } }"""
    ok = await ready.gql(query, {"b": "global", "c": cursor})
    assert [e["node"]["player"]["id"] for e in ok["leaderboard"]["topScores"]["edges"]] == ["alice"]
    body, tag = cursor.split(".")
    tampered = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1] + "." + tag
    for bad in [tampered, cursor + "x", cursor.replace(".", ""), ""]:
        result = await ready.raw(query, {"b": "global", "c": bad})
        assert result["errors"][0]["extensions"]["code"] == "INVALID_CURSOR", bad
    elsewhere = await ready.raw(query, {"b": "other", "c": cursor})
    assert elsewhere["errors"][0]["extensions"]["code"] == "INVALID_CURSOR"


async def test_oversized_and_malformed_requests_are_4xx(ready: Api) -> None:
    body = json.dumps({"query": "{ __typename }", "variables": {"x": "a" * (2 << 20)}})
    huge = await ready.http.post(
        "/graphql",
        data=io.BytesIO(body.encode()),
        headers={"Content-Type": "application/json"},
    )
    assert huge.status == 413
    broken = await ready.http.post(
        "/graphql", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert broken.status == 400
    no_query = await ready.http.post("/graphql", json={"variables": {}})
    assert no_query.status == 400
