"""Abuse: documents that would make the service spend without bound are refused before they
run, anonymous callers are held to an allowance, and a request's database calls are capped."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLObjectType, get_named_type, parse

from edge.cost_cache import remembered_cost
from edge.cost_model import FIELD_COSTS, MAX_COST, RANK
from edge.cost_walk import document_cost
from edge.schema import GRAPHQL_SCHEMA
from edge.validation import MAX_CHARACTERS, MAX_TOKENS
from leaderboard.config import Limits, Settings
from tests.conftest import API_KEYS, Api, _serve

OPERATIONS = Path(__file__).resolve().parent.parent / "examples" / "operations"

NESTED = (
    'leaderboard(id: "b") { topScores(first: 100) { edges { node { score rank player { id name '
    "scores(first: 100) { edges { node { score } } } "
    "sessions(first: 100) { edges { node { score } } } } } } } }"
)
AMPLIFICATION = "{ " + " ".join(f"a{i}: {NESTED}" for i in range(40)) + " }"
"""An 8 KB document: 40 aliases of a board's top 100 with each player's 100 boards and 100
sessions (about 5,000-8,000 DynamoDB calls if it ran)."""
LONGER = "{ " + " ".join(f"a{i}: {NESTED}" for i in range(60)) + " }"
"""60 of those aliases: over the length limit."""
OVER = "{ " + " ".join(f"a{i}: {NESTED}" for i in range(3)) + " }"
"""Three of those aliases: a small document, within every size limit, over the cost limit."""


def _aliases(count: int) -> str:
    return "{ " + " ".join(f"a{i}: {NESTED}" for i in range(count)) + " }"


AMPLIFIED = [
    (
        LONGER,
        "CHARACTER_LIMIT_EXCEEDED",
        f"Document has {len(LONGER)} characters. Allowed: {MAX_CHARACTERS}",
    ),
    (
        AMPLIFICATION,
        "TOKEN_LIMIT_EXCEEDED",
        f"Syntax Error: Document contains more than {MAX_TOKENS} tokens. Parsing aborted.",
    ),
    (
        _aliases(4),
        "COST_LIMIT_EXCEEDED",
        f"the query's cost is {4 * (2 + 100 * 4)}, over the limit of {MAX_COST}: ask for fewer"
        " items (first), fewer ids, or fewer nested lists",
    ),
]
"""The amplification query at three sizes, each refused by the first limit it breaks: its
length (60 aliases), its tokens (the 8 KB document of 40, within the length), its cost (4
aliases, within both)."""

PAGE = """query($first: Int) { leaderboard(id: "b") { name topScores(first: $first) {
    edges { cursor node { rank score player { name } } } pageInfo { endCursor } } } }"""


def cost(query: str, variables: dict[str, Any] | None = None) -> int:
    return document_cost(GRAPHQL_SCHEMA, parse(query), None, variables)


async def test_a_document_over_the_cost_limit_is_refused_before_any_database_call(
    api: Api,
) -> None:
    api.reset_calls()
    for key in (None, API_KEYS[0]):  # a key is no way around the limit
        body = await api.raw(OVER, key=key)
        assert body.get("data") is None, body
        [error] = body["errors"]
        assert error["extensions"]["code"] == "COST_LIMIT_EXCEEDED"
        assert error["extensions"]["limit"] == MAX_COST
        assert error["extensions"]["cost"] == cost(OVER) == 3 * (2 + 100 * 4)
        assert f"over the limit of {MAX_COST}" in error["message"]
    assert api.calls == {}

    # As a request refused before execution, it gets 400 with the GraphQL response media type.
    response = await api.http.post(
        "/graphql",
        json={"query": OVER},
        headers={"Accept": "application/graphql-response+json"},
    )
    assert response.status == 400
    assert "data" not in await response.json()
    assert api.calls == {}


@pytest.mark.parametrize(("query", "code", "message"), AMPLIFIED, ids=["60", "40", "4"])
async def test_the_amplification_query_is_refused_before_any_database_call(
    api: Api, query: str, code: str, message: str
) -> None:
    assert len(AMPLIFICATION.encode()) > 8000
    assert cost(AMPLIFICATION) == 40 * (2 + 100 * 4)
    api.reset_calls()
    for key in (None, API_KEYS[0]):  # a key is no way around any of the limits
        body = await api.raw(query, key=key)
        assert body.get("data") is None, body
        assert [(e["extensions"]["code"], e["message"]) for e in body["errors"]] == [
            (code, message)
        ], body
    assert api.calls == {}


def test_connections_multiply_what_each_item_selects() -> None:
    # The board, the page's Query, then per entry the player's read and the rank.
    assert cost(PAGE, {"first": 100}) == 1 + 1 + 100 * 2
    assert cost(PAGE, {}) == 1 + 1 + 20 * 2  # first defaults to 20
    assert cost(PAGE, {"first": 5000}) == 1 + 1 + 100 * 2  # the field itself refuses >100
    # Lists of ids multiply by their length; ranks cost RANK each.
    ranks = (
        '{ player(id: "a") { ranks(leaderboardIds: ["x", "y", "z"]) { rank score { score } } } }'
    )
    assert cost(ranks) == 1 + 3 * (RANK + 1)
    around = '{ leaderboard(id: "b") { around(playerId: "a", before: 2, after: 3) { rank } } }'
    assert cost(around) == 1 + (2 + RANK)
    # A fragment costs as often as it is spread, with the type it is spread on.
    twice = """{ a: player(id: "a") { ...P } b: player(id: "b") { ...P } }
        fragment P on Player { sessions(first: 10) { edges { node { player { name } } } } }"""
    assert cost(twice) == 2 * (1 + 1 + 10 * 1)
    # Scalars and introspection are free.
    assert cost('{ __typename player(id: "a") { id name lifetimeScore } }') == 1
    assert cost("{ __schema { types { name fields { name } } } }") == 0


def test_fragments_spread_exponentially_are_costed_without_expanding_them() -> None:
    levels = 40
    fragments = " ".join(
        f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(levels)
    )
    query = f'{{ ...F0 }} {fragments} fragment F{levels} on Query {{ player(id: "a") {{ id }} }}'
    assert cost(query) == 2**levels


def test_every_field_that_returns_an_object_has_a_declared_cost() -> None:
    types = GRAPHQL_SCHEMA.type_map
    returning_objects = {
        f"{name}.{field}"
        for name, kind in types.items()
        if isinstance(kind, GraphQLObjectType) and not name.startswith("__")
        for field, definition in kind.fields.items()
        if isinstance(get_named_type(definition.type), GraphQLObjectType)
    }
    assert returning_objects - set(FIELD_COSTS) == set()
    every_field = {
        f"{name}.{field}"
        for name, kind in types.items()
        if isinstance(kind, GraphQLObjectType)
        for field in kind.fields
    }
    assert set(FIELD_COSTS) - every_field == set()


def _largest_variables(query: str) -> dict[str, Any]:
    """The variables that make an operation cost the most it can: pages of 100, windows of
    50, lists of 100 ids."""
    values: dict[str, Any] = {}
    for name, kind in re.findall(r"\$(\w+)\s*:\s*([\[\]\w!]+)", query):
        if kind.startswith("["):
            values[name] = [f"id{i}" for i in range(100)]
        elif kind.startswith("Int"):
            values[name] = 50 if name in ("before", "after") else 100
        else:
            values[name] = "x"
    return values


@pytest.mark.parametrize("path", sorted(OPERATIONS.glob("*.graphql")), ids=lambda p: p.stem)
def test_every_frontend_operation_fits_the_limit_at_its_largest(path: Path) -> None:
    query = path.read_text()
    assert 0 < cost(query, _largest_variables(query)) <= MAX_COST


async def test_an_answer_reports_its_cost_and_its_calls(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    await api.submit("ann", "b", 10)
    api.reset_calls()
    api.clock.hold()  # no points regained between the requests
    body = await api.raw(PAGE, {"first": 10}, key=None)
    assert body["data"]["leaderboard"]["topScores"]["edges"][0]["node"]["player"]["name"] == "ann"
    report = body["extensions"]["cost"]
    assert report["requestedQueryCost"] == cost(PAGE, {"first": 10}) == 22
    assert report["maximumQueryCost"] == MAX_COST
    assert report["dynamodbCalls"] == sum(api.calls.values()) == 2  # the board, the page
    limits = Limits()
    status = report["throttleStatus"]
    assert status["maximumAvailable"] == limits.anonymous_cost_burst
    assert status["restoreRate"] == limits.anonymous_cost_per_second
    # The 22 points spent by the first request of the address.
    assert status["currentlyAvailable"] == limits.anonymous_cost_burst - 22
    # A caller with a key is not throttled: no allowance to report.
    keyed = await api.raw(PAGE, {"first": 10})
    assert "throttleStatus" not in keyed["extensions"]["cost"]


@pytest.fixture
async def stingy(settings: Settings) -> AsyncIterator[Api]:
    """A service whose anonymous callers may spend 250 points, regaining 1 a second, behind
    one trusted proxy; its clock held, so that no point comes back unless a test says so."""
    limits = replace(
        settings.limits,
        anonymous_cost_burst=250,
        anonymous_cost_per_second=1.0,
        trusted_proxy_hops=1,
    )
    async with _serve(replace(settings, limits=limits), None) as served:
        served.clock.hold()
        yield served


async def _anonymous_page(api: Api, forwarded_for: str) -> tuple[int, dict[str, str], Any]:
    response = await api.http.post(
        "/graphql",
        json={"query": PAGE, "variables": {"first": 100}},
        headers={"X-Forwarded-For": forwarded_for},
    )
    return response.status, dict(response.headers), await response.json()


async def test_an_anonymous_client_over_its_allowance_is_throttled(stingy: Api) -> None:
    await stingy.create_board("b")
    status, _, body = await _anonymous_page(stingy, "198.51.100.7")
    assert status == 200
    assert body["extensions"]["cost"]["requestedQueryCost"] == 202
    stingy.reset_calls()
    status, headers, body = await _anonymous_page(stingy, "198.51.100.7")
    assert status == 429
    [error] = body["errors"]
    assert error["extensions"]["code"] == "THROTTLED"
    retry = error["extensions"]["retryAfter"]
    assert headers["Retry-After"] == str(retry)
    assert retry == 202 - 48  # the points missing, at 1 a second
    assert stingy.calls == {}

    # Another address has its own allowance; the address is the one the trusted proxy saw,
    # whatever the client put in front of it.
    assert (await _anonymous_page(stingy, "203.0.113.9"))[0] == 200
    assert (await _anonymous_page(stingy, "198.51.100.7, 203.0.113.9"))[0] == 429
    assert (await _anonymous_page(stingy, "203.0.113.9, 198.51.100.7"))[0] == 429

    # A caller with a key is never throttled.
    for _ in range(3):
        assert (await stingy.raw(PAGE, {"first": 100}))["data"]["leaderboard"] is not None

    # The wait it was told is exact: that many seconds on, the request is answered.
    stingy.clock.advance(retry - 1)
    assert (await _anonymous_page(stingy, "198.51.100.7"))[0] == 429
    stingy.clock.advance(1)
    assert (await _anonymous_page(stingy, "198.51.100.7"))[0] == 200


async def test_without_a_trusted_proxy_a_forwarded_address_is_ignored(settings: Settings) -> None:
    limits = replace(settings.limits, anonymous_cost_burst=250, anonymous_cost_per_second=1.0)
    async with _serve(replace(settings, limits=limits), None) as api:
        api.clock.hold()  # no point regained between the requests
        await api.create_board("b")
        assert (await _anonymous_page(api, "198.51.100.1"))[0] == 200
        # Making up a new address in X-Forwarded-For gives no new allowance.
        assert (await _anonymous_page(api, "198.51.100.2"))[0] == 429


async def test_a_request_stops_at_its_cap_of_database_calls(settings: Settings) -> None:
    async with _serve(
        replace(settings, limits=replace(settings.limits, max_dynamodb_calls=5)), None
    ) as api:
        await api.create_board("b")
        for p in range(10):
            await api.create_player(f"p{p}")
            await api.submit(f"p{p}", "b", p)
        api.reset_calls()
        # Within the cost limit, but one Query per entry for its sessions: 13 calls in all.
        query = """{ leaderboard(id: "b") { topScores(first: 10) { edges { node {
            player { sessions(first: 1) { edges { node { id } } } } } } } } }"""
        body = await api.raw(query)
        assert body["data"] == {"leaderboard": None}
        codes = {e["extensions"]["code"] for e in body["errors"]}
        assert codes == {"COST_LIMIT_EXCEEDED"}
        assert "limit of 5 database calls" in body["errors"][0]["message"]
        assert sum(api.calls.values()) == 5
        # The next request has its own cap.
        assert (await api.gql('{ leaderboard(id: "b") { entryCount } }')) == {
            "leaderboard": {"entryCount": 10}
        }


def test_a_remembered_cost_is_the_cost_of_those_variables() -> None:
    query = (
        'query Top($n: Int) { leaderboard(id: "b") '
        "{ topScores(first: $n) { edges { node { rank } } } } }"
    )
    document = parse(query)
    costs = [
        remembered_cost(GRAPHQL_SCHEMA, query, document, None, {"n": n}) for n in (10, 100, 10)
    ]
    assert costs == [document_cost(GRAPHQL_SCHEMA, document, None, {"n": n}) for n in (10, 100, 10)]
    assert costs[0] < costs[1]
    # Another operation's name is another operation.
    named = "query A { __typename } " + query.replace("query Top", "query B")
    assert remembered_cost(GRAPHQL_SCHEMA, named, parse(named), "A", {}) == 0
    assert remembered_cost(GRAPHQL_SCHEMA, named, parse(named), "B", {"n": 10}) == costs[0]
