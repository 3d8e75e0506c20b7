"""GraphQL over HTTP edges: undecodable input, operation choice and methods are request
errors with exact statuses, and none of them reaches DynamoDB."""

from __future__ import annotations

from typing import Any

import pytest

from edge.http_request import GRAPHQL_RESPONSE, JSON
from tests.conftest import API_KEYS, Api

QUERY = '{ leaderboard(id: "global") { id } }'
TWO = 'query A { leaderboard(id: "a") { id } } query B { leaderboard(id: "b") { id } }'
MUTATION = (
    'mutation M { createPlayer(input: { id: "p9", name: "n", email: "p9@x.example" })'
    " { player { id } } }"
)
KEYED = {"Authorization": f"Bearer {API_KEYS[0]}"}


@pytest.fixture(params=[JSON, GRAPHQL_RESPONSE])
def accept(request: pytest.FixtureRequest) -> str:
    accepted: str = request.param
    return accepted


async def _post_raw(api: Api, body: bytes, accept: str) -> tuple[int, str, dict[str, str]]:
    api.reset_calls()
    response = await api.http.post(
        "/graphql",
        data=body,
        headers={**KEYED, "Content-Type": "application/json", "Accept": accept},
    )
    text = await response.text()
    assert api.calls == {}, api.calls
    return response.status, text, dict(response.headers)


UNDECODABLE = [
    # Lone surrogates: valid JSON escapes, but no Unicode text.
    b'{"query": "{ __typename }", "operationName": "\\ud800"}',
    b'{"query": "{ __typename }", "operationName": "\\udfff"}',
    b'{"query": "query \\ud800 { __typename }"}',
    b'{"query": "{ __typename } # \\udc00"}',
    b'{"query": "query($v: String) { __typename }", "variables": {"v": "\\ud800"}}',
    b'{"query": "query($v: String) { __typename }", "variables": {"\\ud800": "x"}}',
    b'{"query": "{ __typename }", "variables": {"a": [{"b": ["\\udbff"]}]}}',
    b'{"query": "{ __typename }", "extensions": {"\\ud800": 1}}',
    # Bytes that are not UTF-8, overlong encodings, truncated sequences.
    b'{"query": "\xff\xfe{ __typename }"}',
    b'{"query": "{ __typename }", "operationName": "\xc0\xaf"}',
    b'{"query": "{ __typename }\xe2\x82"}',
    b"\xef\xbb\xbf\xff",
    # Numbers and nesting beyond the parser.
    b'{"query": "{ __typename }", "variables": {"n": 1' + b"0" * 5000 + b"}}",
    b'{"query": "{ __typename }", "variables": ' + b"[" * 100000 + b"]" * 100000 + b"}",
    # NUL and control characters where JSON forbids them raw.
    b'{"query": "{ __typename }\x00"}',
    b'{"query": "{ __typename }", "operationName": 7}',
    b'{"query": "{ __typename }", "operationName": ["A"]}',
    b"",
    b"null",
    b'"\\ud800"',
]


@pytest.mark.parametrize("body", UNDECODABLE, ids=range(len(UNDECODABLE)))
async def test_undecodable_posts_are_400_and_reach_nothing(
    api: Api, body: bytes, accept: str
) -> None:
    status, text, _ = await _post_raw(api, body, accept)
    assert status == 400, text


async def test_the_lone_surrogate_operation_name_is_refused_with_a_clear_message(
    api: Api,
) -> None:
    status, text, headers = await _post_raw(
        api, b'{"query": "{ __typename }", "operationName": "\\ud800"}', JSON
    )
    assert (status, text) == (400, "the request has text that is not valid Unicode")
    assert headers["Content-Type"] == "text/plain; charset=utf-8"


GET_UNDECODABLE = [
    "/graphql?query=%7B__typename%7D&operationName=%ED%A0%80",
    "/graphql?query=%7B__typename%7D&operationName=%FF",
    "/graphql?query=%7B__typename%7D&variables=%7B%22v%22%3A%22%5Cud800%22%7D",
    "/graphql?query=%7B__typename%7D&variables=%7B%22%5Cud800%22%3A1%7D",
    "/graphql?query=%7B__typename%7D&variables=%5B",
    "/graphql?query=%7B__typename%7D&variables=1",
]


@pytest.mark.parametrize("path", GET_UNDECODABLE)
async def test_undecodable_query_strings_are_4xx_never_500(
    api: Api, path: str, accept: str
) -> None:
    api.reset_calls()
    response = await api.http.get(path, headers={**KEYED, "Accept": accept})
    text = await response.text()
    assert response.status == 400, (response.status, text)
    assert api.calls == {}


@pytest.mark.parametrize("path", ["/graphql?query=%FF%FE", "/graphql?query=%7B__typename%7D%00"])
async def test_undecodable_bytes_in_a_get_query_are_a_syntax_error(api: Api, path: str) -> None:
    # The query string's bytes decode to U+FFFD (or a NUL): a document that does not parse,
    # answered as GraphQL over HTTP says (200 for application/json, 400 for its own type).
    for accept, status in ((JSON, 200), (GRAPHQL_RESPONSE, 400)):
        api.reset_calls()
        response = await api.http.get(path, headers={"Accept": accept})
        body = await response.json(content_type=None)
        assert response.status == status
        assert body["errors"][0]["message"].startswith("Syntax Error: Unexpected character")
        assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert api.calls == {}


async def test_a_lone_surrogate_in_the_query_string_is_400(api: Api) -> None:
    # aiohttp decodes %ED%A0%80 (a surrogate's UTF-8 form) to the surrogate itself.
    api.reset_calls()
    response = await api.http.get(
        "/graphql", params={"query": "{ __typename }", "operationName": "\ud800"}
    )
    assert response.status == 400, await response.text()
    assert api.calls == {}


async def _post(api: Api, body: dict[str, Any], accept: str) -> tuple[int, str]:
    api.reset_calls()
    response = await api.http.post("/graphql", json=body, headers={**KEYED, "Accept": accept})
    text = await response.text()
    assert api.calls == {}, api.calls
    return response.status, text


async def test_several_operations_without_a_name_are_a_request_error(api: Api, accept: str) -> None:
    status, text = await _post(api, {"query": TWO}, accept)
    assert (status, text) == (
        400,
        "the document has several operations: name the one to run in operationName",
    )


async def test_an_operation_name_naming_no_operation_is_a_request_error(
    api: Api, accept: str
) -> None:
    status, text = await _post(api, {"query": TWO, "operationName": "C"}, accept)
    assert (status, text) == (400, 'the document has no operation named "C"')
    status, text = await _post(api, {"query": QUERY, "operationName": "Q"}, accept)
    assert (status, text) == (400, 'the document has no operation named "Q"')


async def test_the_named_operation_of_several_runs(api: Api) -> None:
    await api.create_board("b")
    response = await api.http.post(
        "/graphql", json={"query": TWO, "operationName": "B"}, headers=KEYED
    )
    assert response.status == 200
    assert (await response.json())["data"] == {"leaderboard": {"id": "b"}}


async def test_a_mutation_over_get_is_405_allowing_post(api: Api, accept: str) -> None:
    api.reset_calls()
    response = await api.http.get(
        "/graphql", params={"query": MUTATION}, headers={**KEYED, "Accept": accept}
    )
    assert response.status == 405, await response.text()
    assert response.headers["Allow"] == "POST"
    assert await response.text() == "mutations are accepted over POST only, not GET"
    assert api.calls == {}
    # Named among several over GET: the chosen operation decides.
    response = await api.http.get(
        "/graphql",
        params={"query": f"{MUTATION} query Q {{ __typename }}", "operationName": "M"},
        headers=KEYED,
    )
    assert (response.status, response.headers["Allow"]) == (405, "POST")
    assert api.calls == {}
    # Nothing was created.
    assert (await api.gql('{ player(id: "p9") { id } }'))["player"] is None


async def test_a_query_over_get_still_answers(api: Api) -> None:
    response = await api.http.get(
        "/graphql",
        params={"query": f"{MUTATION} query Q {{ __typename }}", "operationName": "Q"},
    )
    assert response.status == 200
    assert (await response.json())["data"] == {"__typename": "Query"}


async def test_a_subscription_over_http_is_still_refused_before_anything_runs(
    api: Api,
) -> None:
    status, text = await _post(
        api,
        {"query": 'subscription { leaderboardChanged(id: "global") { id } }'},
        JSON,
    )
    assert status == 400
    assert text.startswith("subscriptions are served over WebSocket")
