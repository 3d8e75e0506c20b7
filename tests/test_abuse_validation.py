"""Abuse: documents costly to parse or validate are refused before the costly rules run, with a
typed error naming the limit; every documented document still passes; a document sent again is
neither parsed nor validated again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graphql import get_introspection_query

from gql.schema import GRAPHQL_SCHEMA
from gql.validation import (
    MAX_ALIASES,
    MAX_CHARACTERS,
    MAX_ERRORS,
    MAX_FRAGMENTS,
    MAX_OPERATIONS,
    MAX_SAME_NAME,
    MAX_SPREADS,
    MAX_TOKENS,
    STATS,
    check_document,
)
from gql.view import DEFAULT_QUERY
from tests.conftest import API_KEYS, WAIT, Api
from tests.fuzz.limits import token_count

ROOT = Path(__file__).resolve().parent.parent
TYPENAMES = "{ " + "__typename " * 4000 + "}"
"""The document of about 4,000 ``__typename`` tokens that once cost up to 0.9 s to validate."""
DENSE = "{" + " a" * (MAX_CHARACTERS // 2 - 1) + "}"
"""Within the character limit, eight times over the token limit."""


def _codes(body: dict[str, Any]) -> set[str]:
    return {e["extensions"]["code"] for e in body.get("errors") or []}


def _messages(body: dict[str, Any]) -> str:
    return " ".join(e["message"] for e in body.get("errors") or [])


async def _refused_before_anything_runs(api: Api, query: str, limit: str) -> None:
    api.reset_calls()
    validated = STATS.validated
    for key in (None, API_KEYS[0]):
        body = await api.raw(query, key=key)
        assert body.get("data") is None, body
        assert _codes(body) == {"GRAPHQL_VALIDATION_FAILED"}, body
        assert limit in _messages(body), body
    assert api.calls == {}
    assert STATS.validated == validated, "the specification's rules ran"


async def test_the_four_thousand_token_document_is_refused_unparsed(api: Api) -> None:
    assert len(TYPENAMES) > MAX_CHARACTERS
    parsed = STATS.parsed
    await _refused_before_anything_runs(api, TYPENAMES, f"Allowed: {MAX_CHARACTERS}")
    assert STATS.parsed == parsed


async def test_a_dense_document_stops_the_parser_at_the_token_limit(api: Api) -> None:
    assert len(DENSE) <= MAX_CHARACTERS
    await _refused_before_anything_runs(api, DENSE, f"more than {MAX_TOKENS} tokens")


async def test_a_wide_document_is_refused_before_the_overlapping_fields_rule(api: Api) -> None:
    query = "{ " + "__typename " * (MAX_TOKENS - 2) + "}"
    await _refused_before_anything_runs(api, query, f"Allowed: {MAX_SAME_NAME}")


async def test_same_named_fields_are_counted_through_fragments(api: Api) -> None:
    """Fields merged from inline fragments and from every expansion of a fragment count."""
    inline = "{ " + "... on Query { __typename } " * (MAX_SAME_NAME + 1) + "}"
    await _refused_before_anything_runs(api, inline, f"{MAX_SAME_NAME + 1} fields named")
    bomb = (
        "{ ...F0 } fragment F0 on Query { ...F1 ...F1 } fragment F1 on Query { ...F2 ...F2 }"
        " fragment F2 on Query { ...F3 ...F3 } fragment F3 on Query { __typename }"
    )
    await _refused_before_anything_runs(api, bomb, "8 fields named '__typename'")


async def test_over_websocket_the_document_is_refused_with_its_code(api: Api) -> None:
    async with api.http.ws_connect("/graphql", protocols=("graphql-transport-ws",)) as ws:
        await ws.send_json({"type": "connection_init"})
        assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": DENSE}})
        message = await ws.receive_json(timeout=WAIT)
    assert message["type"] == "error", message
    [error] = message["payload"]
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert f"more than {MAX_TOKENS} tokens" in error["message"]


def _characters(n: int) -> str:
    base = "{ __typename }\n#"
    return base + "x" * (n - len(base))


def _tokens(n: int) -> str:
    """``n`` tokens: aliased ``__type`` fields of 11 and 12 tokens."""
    rest = n - 2
    longer = rest % 11
    shorter = (rest - 12 * longer) // 11
    fields = [f'a{i}: __type(name: "Query") {{ name }}' for i in range(shorter)]
    fields += [f'b{i}: __type(name: "Query") {{ name kind }}' for i in range(longer)]
    return "{ " + " ".join(fields) + " }"


def _operations(n: int) -> str:
    return " ".join(f"query Q{i} {{ __typename }}" for i in range(n))


def _fragments(n: int) -> str:
    """A chain of ``n`` fragment definitions."""
    chain = " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(n - 1))
    return f"{{ ...F0 }} {chain} fragment F{n - 1} on Query {{ __typename }}"


def _spreads(n: int) -> str:
    spreads = " ".join(f"...F{i}" for i in range(n))
    return f"{{ __typename {spreads} }} " + " ".join(
        f"fragment F{i} on Query {{ f{i}: __typename }}" for i in range(n)
    )


def _same_name(n: int) -> str:
    return "{ " + "__typename " * n + "}"


def _aliases(n: int) -> str:
    return "{ " + " ".join(f"a{i}: __typename" for i in range(n)) + " }"


LIMITS = [
    pytest.param(_characters, MAX_CHARACTERS, f"Allowed: {MAX_CHARACTERS}", id="characters"),
    pytest.param(_tokens, MAX_TOKENS, f"more than {MAX_TOKENS} tokens", id="tokens"),
    pytest.param(_operations, MAX_OPERATIONS, f"Allowed: {MAX_OPERATIONS}", id="operations"),
    pytest.param(_fragments, MAX_FRAGMENTS, f"Allowed: {MAX_FRAGMENTS}", id="fragments"),
    pytest.param(_spreads, MAX_SPREADS, f"Allowed: {MAX_SPREADS}", id="spreads"),
    pytest.param(_same_name, MAX_SAME_NAME, f"Allowed: {MAX_SAME_NAME}", id="same name"),
    pytest.param(_aliases, MAX_ALIASES, f"Allowed: {MAX_ALIASES}", id="aliases"),
]


@pytest.mark.parametrize(("document", "limit", "message"), LIMITS)
async def test_each_limit_admits_its_limit_and_refuses_one_more(
    api: Api, document: Any, limit: int, message: str
) -> None:
    at_limit, over = document(limit), document(limit + 1)
    if document is _tokens:
        assert (token_count(at_limit), token_count(over)) == (limit, limit + 1)
    if document is _characters:
        assert (len(at_limit), len(over)) == (limit, limit + 1)
    operation = {"operationName": "Q0"} if document is _operations else {}
    admitted = await _post(api, at_limit, operation)
    assert "errors" not in admitted, admitted
    assert admitted["data"], admitted
    refused = await _post(api, over, operation)
    assert refused.get("data") is None, refused
    assert _codes(refused) == {"GRAPHQL_VALIDATION_FAILED"}, refused
    assert message in _messages(refused), refused


async def _post(api: Api, query: str, extra: dict[str, Any]) -> dict[str, Any]:
    response = await api.http.post("/graphql", json={"query": query, **extra})
    body: dict[str, Any] = await response.json()
    return body


async def test_a_document_sent_again_is_not_parsed_or_validated_again(api: Api) -> None:
    valid = '{ leaderboard(id: "validated-once-more") { id name } }'
    invalid = "{ leaderboard(id: 1) { nope } }"
    first = (await api.raw(valid), await api.raw(invalid))
    before = (STATS.parsed, STATS.validated)
    for _ in range(3):
        assert (await api.raw(valid), await api.raw(invalid)) == first
    assert (STATS.parsed, STATS.validated) == before
    assert first[0]["data"] == {"leaderboard": None}
    assert _codes(first[1]) == {"GRAPHQL_VALIDATION_FAILED"}


async def test_errors_are_capped_and_suggest_nothing(api: Api) -> None:
    fields = " ".join(f"leaderbord{i}" for i in range(30))
    body = await api.raw(f"{{ {fields} }}")
    assert len(body["errors"]) == MAX_ERRORS
    assert body["errors"][-1]["message"].endswith("Validation aborted.")
    assert _codes(body) == {"GRAPHQL_VALIDATION_FAILED"}
    typo = await api.raw('{ leaderbord(id: "b") { id } }')
    assert "Did you mean" not in _messages(typo)
    assert "leaderboard" not in _messages(typo)


def _documented() -> list[Any]:
    documents = [
        pytest.param(path.read_text(), id=path.name)
        for path in sorted((ROOT / "examples" / "operations").glob("*.graphql"))
    ]
    documents.append(pytest.param(DEFAULT_QUERY, id="GraphiQL default"))
    documents.append(pytest.param(get_introspection_query(), id="introspection"))
    documents.append(
        pytest.param(
            get_introspection_query(
                descriptions=True,
                specified_by_url=True,
                directive_is_repeatable=True,
                schema_description=True,
                input_value_deprecation=True,
            ),
            id="GraphiQL introspection",
        )
    )
    return documents


@pytest.mark.parametrize("document", _documented())
def test_every_documented_document_is_within_the_limits(document: str) -> None:
    checked = check_document(GRAPHQL_SCHEMA, document)
    assert checked.document is not None
    assert checked.errors == (), checked.errors


def test_the_benchmark_measures_allowed_documents_and_refused_ones() -> None:
    from bench.validation.documents import worst_documents

    outcomes = {
        name: not check_document(GRAPHQL_SCHEMA, query).errors for name, query in worst_documents()
    }
    allowed = [name for name, valid in outcomes.items() if valid]
    assert len(allowed) == 9, outcomes
    assert "GraphiQL's introspection query" in allowed
    assert not outcomes["the amplification query (40 aliases of nested pages)"]
    assert not outcomes["4,000 __typename tokens (the finding)"]
