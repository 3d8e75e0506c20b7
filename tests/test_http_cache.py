"""HTTP caching for shared caches: anonymous GET queries are public, with a strong ETag and
304s for If-None-Match; keyed, private, POSTed and failed answers are never stored."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import ClientResponse
from graphql import GraphQLObjectType, parse

from edge.http_cache import PRIVATE_FIELDS, CachePolicy, matches, names_private_field
from edge.schema import GRAPHQL_SCHEMA
from leaderboard.config import Settings
from leaderboard.headers import API_CSP
from tests.conftest import ADMIN_KEYS, API_KEYS, Api, _serve

PUBLIC = "public, max-age=1, stale-while-revalidate=10"
PRIVATE = "private, no-store"
STRONG_TAG = re.compile(r'^"[A-Za-z0-9_-]{22}"$')
TOP = (
    '{ leaderboard(id: "arena") { entryCount '
    "topScores(first: 3) { edges { node { rank score player { name } } } } } }"
)
SECURITY = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Server": "leaderboard",
    "Content-Security-Policy": API_CSP,
}


async def _board(api: Api, scores: dict[str, int]) -> None:
    await api.create_board("arena")
    for player, score in scores.items():
        await api.create_player(player)
        assert (await api.submit(player, "arena", score))["errors"] == []


async def _get(api: Api, query: str = TOP, **headers: str) -> ClientResponse:
    return await api.http.get("/graphql", params={"query": query}, headers=headers)


def _vary(response: ClientResponse) -> set[str]:
    return {v.strip().lower() for v in response.headers.get("Vary", "").split(",")}


def _assert_public(response: ClientResponse) -> str:
    assert response.status == 200
    assert response.headers["Cache-Control"] == PUBLIC
    assert {"accept", "authorization"} <= _vary(response)
    for name, value in SECURITY.items():
        assert response.headers[name] == value, name
    tag = response.headers["ETag"]
    assert STRONG_TAG.match(tag), tag
    return tag


def _scores(body: dict[str, Any]) -> list[int]:
    edges = body["data"]["leaderboard"]["topScores"]["edges"]
    return [edge["node"]["score"] for edge in edges]


async def test_an_anonymous_get_is_public_with_one_tag_for_one_answer(api: Api) -> None:
    await _board(api, {"ann": 30, "bob": 20, "cy": 10})
    first = await _get(api)
    tag = _assert_public(first)
    body = await first.json()
    assert _scores(body) == [30, 20, 10]
    # Nothing particular to this request or client address in a public answer: the cost of
    # the document stays, the calls made and the client's allowance go.
    # (1 + 1 + 3 x (1 + 1) points: the board, its page, each entry's rank and player)
    assert body["extensions"] == {"cost": {"requestedQueryCost": 8, "maximumQueryCost": 1000}}
    again = await _get(api)
    assert _assert_public(again) == tag
    assert await again.json() == body


async def test_a_matching_if_none_match_is_a_304_after_the_same_reads(api: Api) -> None:
    await _board(api, {"ann": 30, "bob": 20})
    api.reset_calls()
    full = await _get(api)
    tag = _assert_public(full)
    full_calls = api.calls
    assert sum(full_calls.values()) > 0
    api.reset_calls()
    revalidated = await _get(api, **{"If-None-Match": tag})
    assert revalidated.status == 304
    assert await revalidated.read() == b""
    assert revalidated.headers["ETag"] == tag
    assert revalidated.headers["Cache-Control"] == PUBLIC
    assert {"accept", "authorization"} <= _vary(revalidated)
    for name, value in SECURITY.items():
        assert revalidated.headers[name] == value, name
    # The query ran as for a 200: the tag is of its answer.
    assert api.calls == full_calls


async def test_a_play_that_changes_the_page_changes_the_tag(api: Api) -> None:
    await _board(api, {"ann": 30, "bob": 20})
    old = _assert_public(await _get(api))
    await api.create_player("cy")
    assert (await api.submit("cy", "arena", 25))["errors"] == []
    changed = await _get(api, **{"If-None-Match": old})
    new = _assert_public(changed)
    assert new != old
    assert _scores(await changed.json()) == [30, 25, 20]
    assert (await _get(api, **{"If-None-Match": new})).status == 304


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {API_KEYS[0]}", f"Bearer {ADMIN_KEYS[0]}", "Bearer not-a-key", "Basic abc", ""],
)
async def test_any_authorization_header_makes_the_answer_private(
    api: Api, authorization: str
) -> None:
    await _board(api, {"ann": 30})
    tag = _assert_public(await _get(api))
    keyed = await _get(api, Authorization=authorization, **{"If-None-Match": tag})
    assert keyed.status == 200
    assert keyed.headers["Cache-Control"] == PRIVATE
    assert "ETag" not in keyed.headers
    assert {"accept", "authorization"} <= _vary(keyed)
    assert _scores(await keyed.json()) == [30]


async def test_a_post_is_never_stored(api: Api) -> None:
    await _board(api, {"ann": 30})
    response = await api.http.post("/graphql", json={"query": TOP})
    assert response.status == 200
    assert _scores(await response.json()) == [30]
    assert response.headers["Cache-Control"] == PRIVATE
    assert "ETag" not in response.headers


@pytest.mark.parametrize(
    ("query", "accept", "status", "code"),
    [
        ("{ leaderboard(id:", "application/json", 200, "GRAPHQL_VALIDATION_FAILED"),
        ("{ nothing }", "application/graphql-response+json", 400, "GRAPHQL_VALIDATION_FAILED"),
        ('{ leaderboard(id: "a#b") { name } }', "application/json", 200, "INVALID_ID"),
        ('{ playerByEmail(email: "a@x.example") { id } }', "application/json", 200, None),
    ],
)
async def test_an_error_answer_is_never_stored(
    api: Api, query: str, accept: str, status: int, code: str | None
) -> None:
    response = await _get(api, query, Accept=accept, **{"If-None-Match": "*"})
    assert response.status == status
    body = await response.json()
    expected = code or "UNAUTHENTICATED"
    assert [e["extensions"]["code"] for e in body["errors"]] == [expected]
    assert response.headers["Cache-Control"] == "no-store"
    assert "ETag" not in response.headers
    assert response.headers["Content-Security-Policy"] == API_CSP


async def test_a_refused_request_is_never_stored(api: Api) -> None:
    mutation = await _get(
        api,
        'mutation { createPlayer(input: {id: "a", name: "a", email: "a@x.example"}) '
        "{ errors { code } } }",
    )
    assert mutation.status == 405
    assert mutation.headers["Allow"] == "POST"
    assert mutation.headers["Cache-Control"] == "no-store"
    several = await _get(api, "query A { __typename } query B { __typename }")
    assert several.status == 400
    assert several.headers["Cache-Control"] == "no-store"
    assert "ETag" not in several.headers


async def test_a_null_for_an_unknown_board_is_a_public_answer(api: Api) -> None:
    response = await _get(api, '{ leaderboard(id: "nowhere") { name } }')
    _assert_public(response)
    assert (await response.json())["data"] == {"leaderboard": None}


@pytest.mark.parametrize(
    "query",
    [
        '{ player(id: "ann") { name email } }',
        '{ player(id: "ann") { name moderation { banned } } }',
        '{ player(id: "ann") { ...P } } fragment P on Player { name email }',
        '{ player(id: "ann") { name ... on Player { e: email } } }',
    ],
)
async def test_an_answer_naming_a_private_field_is_private_even_without_a_key(
    api: Api, query: str
) -> None:
    await api.create_player("ann")
    response = await _get(api, query)
    assert response.status == 200
    body = await response.json()
    assert "errors" not in body
    assert body["data"]["player"]["name"] == "ann"
    assert response.headers["Cache-Control"] == PRIVATE
    assert "ETag" not in response.headers


async def test_the_graphiql_page_is_never_stored(api: Api) -> None:
    response = await api.http.get("/graphql", headers={"Accept": "text/html"})
    assert response.status == 200
    assert "<title>Leaderboard GraphQL</title>" in await response.text()
    assert response.headers["Cache-Control"] == PRIVATE
    assert "ETag" not in response.headers
    assert "nonce-" in response.headers["Content-Security-Policy"]


async def test_each_media_type_has_its_own_tag(api: Api) -> None:
    await _board(api, {"ann": 30})
    as_json = await _get(api, Accept="application/json")
    as_graphql = await _get(api, Accept="application/graphql-response+json")
    assert as_graphql.headers["Content-Type"].startswith("application/graphql-response+json")
    assert await as_json.read() == await as_graphql.read()
    json_tag, graphql_tag = _assert_public(as_json), _assert_public(as_graphql)
    assert json_tag != graphql_tag
    crossed = await _get(
        api, Accept="application/graphql-response+json", **{"If-None-Match": json_tag}
    )
    assert crossed.status == 200


@pytest.mark.parametrize(
    ("header", "status"),
    [
        ("{tag}", 304),
        ("W/{tag}", 304),
        ('"other", {tag}', 304),
        ('W/"other",W/{tag}', 304),
        ('"a,b" ,  , {tag}', 304),
        ("*", 304),
        ('"other"', 200),
        ('W/"other", "more"', 200),
        ("{bare}", 200),
        ("", 200),
    ],
)
async def test_if_none_match_forms(api: Api, header: str, status: int) -> None:
    await _board(api, {"ann": 30})
    tag = _assert_public(await _get(api))
    value = header.format(tag=tag, bare=tag.strip('"'))
    response = await _get(api, **{"If-None-Match": value})
    assert response.status == status
    assert response.headers["ETag"] == tag
    assert (await response.read() == b"") is (status == 304)


async def test_if_none_match_over_several_header_lines(api: Api) -> None:
    await _board(api, {"ann": 30})
    tag = _assert_public(await _get(api))
    response = await api.http.get(
        "/graphql",
        params={"query": TOP},
        headers=[("If-None-Match", '"other"'), ("If-None-Match", f"W/{tag}")],
    )
    assert response.status == 304


def test_matching_follows_rfc_9110_weak_comparison() -> None:
    tag = '"abc"'
    assert matches(['"abc"'], tag)
    assert matches(['W/"abc"'], tag)
    assert matches([' "x" , W/"abc" '], tag)
    assert matches(['"x"', "*"], tag)
    assert not matches([], tag)
    assert not matches(['"abcd"', '"ab"'], tag)
    assert not matches(["abc"], tag)
    assert not matches(['w/"abc"'], tag)  # the weak prefix is case-sensitive
    assert not matches(['"x" junk, "abc"'], tag)  # read up to the fault only
    assert not matches(['"*"'], tag)
    assert matches(['"a,b",' + " " * 8000 + ', ,W/"abc"'], tag)
    assert not matches(['"a",' + " " * 8000 + 'x, "abc"'], tag)
    assert not matches(['W/"abc'], tag)


@pytest.fixture
async def lean_api(settings: Settings) -> AsyncIterator[Api]:
    """An app whose anonymous clients may spend 5 points, regaining none while its clock is
    held (as it is here)."""
    limits = replace(settings.limits, anonymous_cost_burst=5, anonymous_cost_per_second=0.001)
    async with _serve(replace(settings, limits=limits), None) as served:
        served.clock.hold()
        yield served


async def test_a_304_counts_against_the_allowance(lean_api: Api) -> None:
    query = '{ leaderboard(id: "arena") { name } }'  # costs 1
    tag = _assert_public(await _get(lean_api, query))
    for _ in range(4):
        assert (await _get(lean_api, query, **{"If-None-Match": tag})).status == 304
    refused = await _get(lean_api, query, **{"If-None-Match": tag})
    assert refused.status == 429
    assert refused.headers["Retry-After"]
    assert refused.headers["Cache-Control"] == "no-store"
    assert "ETag" not in refused.headers
    body = await refused.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["THROTTLED"]


async def test_the_cost_limit_applies_to_a_get(api: Api) -> None:
    page = (
        'leaderboard(id: "arena") '
        "{ topScores(first: 100) { edges { node { rank player { name } } } } }"
    )
    query = "{ " + " ".join(f"b{i}: {page}" for i in range(5)) + " }"  # 5 x 202 points
    api.reset_calls()
    response = await _get(api, query, **{"If-None-Match": "*"})
    assert response.status == 200
    body = await response.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["COST_LIMIT_EXCEEDED"]
    assert response.headers["Cache-Control"] == "no-store"
    assert api.calls == {}


async def test_the_lifetimes_are_settings(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEADERBOARD_HTTP_MAX_AGE", "5")
    monkeypatch.setenv("LEADERBOARD_HTTP_STALE_WHILE_REVALIDATE", "0")
    configured = Settings.from_env()
    assert (configured.http_max_age, configured.http_stale_while_revalidate) == (5, 0)
    lifetimes = replace(settings, http_max_age=5, http_stale_while_revalidate=0)
    async with _serve(lifetimes, None) as api:
        response = await _get(api, '{ leaderboard(id: "arena") { name } }')
        assert response.headers["Cache-Control"] == "public, max-age=5, stale-while-revalidate=0"


@pytest.mark.parametrize("value", ["-1", "1.5", "soon", "²"])
def test_a_lifetime_that_is_not_whole_seconds_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("LEADERBOARD_HTTP_MAX_AGE", value)
    with pytest.raises(ValueError, match="LEADERBOARD_HTTP_MAX_AGE"):
        Settings.from_env()
    with pytest.raises(ValueError, match="whole seconds"):
        CachePolicy(max_age=-1)


def test_the_private_fields_are_the_schemas_caller_dependent_fields() -> None:
    """Every field the schema describes as private or key-only (outside mutations, which GET
    never runs) is in the list, and everything in the list is a field of the schema."""
    described = set()
    key_only = re.compile(r"\bPrivate\b|[Nn]eeds an? (?:API|admin) key|with an admin key only")
    for type_name, kind in GRAPHQL_SCHEMA.type_map.items():
        if type_name in ("Mutation", "Subscription") or not isinstance(kind, GraphQLObjectType):
            continue
        for field_name, field in kind.fields.items():
            if field.description and key_only.search(field.description):
                described.add((type_name, field_name))
    assert described == PRIVATE_FIELDS


def test_private_fields_are_found_through_fragments_and_aliases() -> None:
    assert names_private_field(parse("{ player(id: 1) { x: email } }"))
    assert names_private_field(
        parse("{ ...Q } fragment Q on Query { moderationLog { edges { cursor } } }")
    )
    assert not names_private_field(
        parse('{ player(id: 1) { name } leaderboard(id: "g") { name } }')
    )
