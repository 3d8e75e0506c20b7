"""Inputs the fuzz tests found the service answering with INTERNAL_SERVER_ERROR, a 500 or a
crash, each fixed since and kept here as a regression test."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from leaderboard.app import create_app
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.config import Settings
from tests.conftest import API_KEYS, Api, Clock
from tests.fuzz.answers import assert_alive
from tests.fuzz.limits import MAX_FRAGMENTS, MAX_TOKENS, token_count
from tests.fuzz.operations import CREATE_BOARD, CREATE_FAMILY, CREATE_PLAYER, SUBMIT
from tests.fuzz.wire import http_request, raw_http
from tests.fuzz.world import mutate_ok
from tests.scan import scan_items


@pytest.fixture
async def bare(settings: Settings) -> AsyncIterator[Api]:
    """The service over no table: for requests refused before anything is read or written."""
    app = create_app(settings, credentials=LOCAL_CREDENTIALS, clock=Clock())
    async with TestClient(TestServer(app)) as http:
        yield Api(http, Clock())


def _codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors") or []]


async def test_email_with_a_lone_surrogate_is_rejected(api: Api) -> None:
    # A lone surrogate is no Unicode text: the request is refused before GraphQL.
    response = await api.http.post(
        "/graphql",
        json={
            "query": CREATE_PLAYER,
            "variables": {"i": {"id": "sur", "name": "n", "email": "\ud800@x.example"}},
        },
        headers={"Authorization": f"Bearer {API_KEYS[0]}"},
    )
    assert response.status == 400, await response.text()
    assert await scan_items(api.db) == []


CREATES_AT_THE_ENDS = {
    "startsAt year 1 +05:00": (
        CREATE_BOARD,
        {"id": "b", "name": "n", "period": "DAILY", "startsAt": "0001-01-01T00:00:00+05:00"},
    ),
    "endsAt year 9999 -05:00": (
        CREATE_BOARD,
        {"id": "b", "name": "n", "period": "DAILY", "endsAt": "9999-12-31T23:59:59-05:00"},
    ),
    "seasonStart year 1 +05:00": (
        CREATE_FAMILY,
        {
            "id": "f",
            "name": "n",
            "period": "SEASON",
            "seasonStart": "0001-01-01T00:00:00+05:00",
            "seasonDays": 7,
        },
    ),
}
BOARDS_AT_THE_ENDS = {
    "daily board(at:) 9999-12-31 UTC": ("DAILY", "UTC", "9999-12-31T12:00:00Z"),
    "weekly board(at:) 0001-01-01 Etc/GMT+12": ("WEEKLY", "Etc/GMT+12", "0001-01-01T00:00:00Z"),
}


@pytest.mark.parametrize("case", [*CREATES_AT_THE_ENDS, *BOARDS_AT_THE_ENDS])
async def test_datetimes_at_the_ends_of_the_calendar(api: Api, case: str) -> None:
    if case in CREATES_AT_THE_ENDS:
        document, value = CREATES_AT_THE_ENDS[case]
        body = await api.raw(document, {"i": value})
    else:
        period, zone, at = BOARDS_AT_THE_ENDS[case]
        family = {"id": "f", "name": "n", "period": period, "timezone": zone}
        await mutate_ok(api, CREATE_FAMILY, {"i": family})
        body = await api.raw(
            'query($at: DateTime!) { leaderboardFamily(id: "f") { board(at: $at) { id } } }',
            {"at": at},
        )
    assert "INTERNAL_SERVER_ERROR" not in _codes(body), body


async def test_time_zone_longer_than_a_file_name(api: Api) -> None:
    body = await api.raw(
        CREATE_FAMILY, {"i": {"id": "f", "name": "n", "period": "DAILY", "timezone": "a" * 300}}
    )
    assert _codes(body) == [], body
    errors = body["data"]["createLeaderboardFamily"]["errors"]
    assert [e["code"] for e in errors] == ["INVALID_ARGUMENT"], body


@pytest.mark.parametrize("days", [2**31 - 1, 3_000_000])
async def test_season_days_past_the_calendar(api: Api, days: int) -> None:
    await api.create_player("p")
    created = await api.raw(
        CREATE_FAMILY,
        {
            "i": {
                "id": "s",
                "name": "n",
                "period": "SEASON",
                "seasonStart": "2020-01-01T00:00:00Z",
                "seasonDays": days,
            }
        },
    )
    assert _codes(created) == [], created
    if created["data"]["createLeaderboardFamily"]["errors"]:
        return
    read = await api.raw('{ leaderboardFamily(id: "s") { current { id } previous { id } } }')
    assert _codes(read) == [], read
    play = await api.raw(
        SUBMIT, {"i": {"playerId": "p", "gameId": "g", "score": 1, "familyIds": ["s"]}}
    )
    assert _codes(play) == [], play


SUBSCRIPTION = 'subscription Live { leaderboardChanged(leaderboardId: "x") { leaderboardId } }'


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_a_subscription_over_plain_http_is_refused_with_where_it_is_served(
    bare: Api, method: str
) -> None:
    if method == "POST":
        response = await bare.http.post("/graphql", json={"query": SUBSCRIPTION})
    else:
        response = await bare.http.get("/graphql", params={"query": SUBSCRIPTION})
    assert response.status == 400
    assert "served over WebSocket" in await response.text()
    await assert_alive(bare)


async def test_a_query_beside_a_subscription_is_answered(bare: Api) -> None:
    response = await bare.http.post(
        "/graphql", json={"query": f"query Q {{ __typename }} {SUBSCRIPTION}", "operationName": "Q"}
    )
    assert response.status == 200
    answer = await response.json()
    assert "errors" not in answer, answer
    assert answer["data"] == {"__typename": "Query"}


NOT_AN_OBJECT = {
    "number": b"5",
    "null": b"null",
    "true": b"true",
    "float": b"1.5",
    "string": b'"x"',
    "invalid UTF-8": b'{"query": "{ __typename }\xff"}',
    "lone byte": b"\xff",
    "UTF-16 BOM": b'\xff\xfe{"query": "{ __typename }"}',
    "5000-digit integer": b'{"query": "{ __typename }", "variables": {"x": ' + b"1" * 5000 + b"}}",
    "nested 5000 deep": b'{"query": "{ __typename }", "variables": {"x": '
    + b"[" * 5000
    + b"]" * 5000
    + b"}}",
}


@pytest.mark.parametrize("body", list(NOT_AN_OBJECT.values()), ids=list(NOT_AN_OBJECT))
async def test_request_body_that_is_not_a_json_object(bare: Api, body: bytes) -> None:
    reply = await raw_http(
        bare, http_request("POST", b"/graphql", [(b"Content-Type", b"application/json")], body)
    )
    assert reply.status == 400, reply
    await assert_alive(bare)


@pytest.mark.parametrize(
    "variables", [b"1" * 5000, b"[" * 3000 + b"]" * 3000], ids=["digits", "nested"]
)
async def test_get_variables_that_crash_the_json_parser(bare: Api, variables: bytes) -> None:
    target = b"/graphql?query=%7B__typename%7D&variables=" + variables
    reply = await raw_http(bare, http_request("GET", target, []))
    assert reply.status == 400, reply


@pytest.mark.parametrize(
    "accept", ["application/json;q=abc", "application/graphql-response+json;q="]
)
async def test_accept_header_with_a_bad_quality(bare: Api, accept: str) -> None:
    response = await bare.http.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"Accept": accept}
    )
    assert response.status == 200, await response.text()


@pytest.mark.parametrize(
    "authorization", [b"Bearer \xff", b"Bearer caf\xe9"], ids=["xff", "latin1"]
)
async def test_authorization_header_that_is_not_utf8(bare: Api, authorization: bytes) -> None:
    body = json.dumps({"query": WRITE_WITHOUT_INPUT}).encode()
    headers = [(b"Content-Type", b"application/json"), (b"Authorization", authorization)]
    reply = await raw_http(bare, http_request("POST", b"/graphql", headers, body))
    assert reply.status == 200, reply
    assert _codes(json.loads(reply.text)) == ["UNAUTHENTICATED"]


WRITE_WITHOUT_INPUT = 'mutation { createLeaderboard(input: {id: "b", name: "b", period: GLOBAL}) { errors { code } } }'  # noqa: E501


@pytest.mark.parametrize("count", [MAX_FRAGMENTS - 1, MAX_FRAGMENTS])
async def test_long_fragment_chain_within_the_token_limit(bare: Api, count: int) -> None:
    """No recursion through the chain: answered, or past the fragment limit refused with a
    typed error."""
    fragments = " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(count))
    query = f"{{ ...F0 }} {fragments} fragment F{count} on Query {{ __typename }}"
    assert token_count(query) < MAX_TOKENS
    body = await bare.raw(query)
    if count + 1 <= MAX_FRAGMENTS:
        assert "errors" not in body, body
        assert body["data"] == {"__typename": "Query"}, body
    else:
        assert body["data"] is None
        assert [e["extensions"]["code"] for e in body["errors"]] == ["FRAGMENT_LIMIT_EXCEEDED"]
