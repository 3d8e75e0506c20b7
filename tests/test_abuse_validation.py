"""Abuse: documents costly to parse or validate are refused before the costly rules run, with a
typed error naming the limit; every documented document still passes; a document sent again is
neither parsed nor validated again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graphql import get_introspection_query, parse

from bench.validation.documents import (
    FRONTEND,
    GRAPHIQL_INTROSPECTION,
    aliased_boards,
    nested,
    nested_repeats,
)
from edge.cost_model import MAX_COST
from edge.cost_walk import document_cost
from edge.document_cache import VALIDATION_CACHE_TOKENS, Documents
from edge.rules import MergeWorkExceeded, run_rules
from edge.schema import GRAPHQL_SCHEMA
from edge.validation import (
    MAX_ALIASES,
    MAX_CHARACTERS,
    MAX_DEPTH,
    MAX_ERRORS,
    MAX_FRAGMENTS,
    MAX_MERGE_WORK,
    MAX_OPERATIONS,
    MAX_SAME_NAME,
    MAX_SPREADS,
    MAX_TOKENS,
    STATS,
    check_document,
)
from leaderboard.graphiql import DEFAULT_QUERY
from tests.conftest import API_KEYS, WAIT, Api
from tests.fuzz.limits import token_count

ROOT = Path(__file__).resolve().parent.parent
TYPENAMES = "{ " + "__typename " * 4000 + "}"
"""The document of about 4,000 ``__typename`` tokens that once cost up to 0.9 s to validate."""
DENSE = "{" + " a" * (MAX_CHARACTERS // 2 - 1) + "}"
"""Within the character limit, six times over the token limit."""


def _codes(body: dict[str, Any]) -> set[str]:
    return {e["extensions"]["code"] for e in body.get("errors") or []}


def _messages(body: dict[str, Any]) -> str:
    return " ".join(e["message"] for e in body.get("errors") or [])


async def _refused_before_anything_runs(api: Api, query: str, code: str, limit: str) -> None:
    api.reset_calls()
    validated = STATS.validated
    for key in (None, API_KEYS[0]):
        body = await api.raw(query, key=key)
        assert body.get("data") is None, body
        assert _codes(body) == {code}, body
        assert limit in _messages(body), body
    assert api.calls == {}
    assert STATS.validated == validated, "the specification's rules ran"


async def test_the_four_thousand_token_document_is_refused_unparsed(api: Api) -> None:
    assert len(TYPENAMES) > MAX_CHARACTERS
    parsed = STATS.parsed
    await _refused_before_anything_runs(
        api, TYPENAMES, "CHARACTER_LIMIT_EXCEEDED", f"Allowed: {MAX_CHARACTERS}"
    )
    assert STATS.parsed == parsed


async def test_a_dense_document_stops_the_parser_at_the_token_limit(api: Api) -> None:
    assert len(DENSE) <= MAX_CHARACTERS
    await _refused_before_anything_runs(
        api, DENSE, "TOKEN_LIMIT_EXCEEDED", f"more than {MAX_TOKENS} tokens"
    )


async def test_a_wide_document_is_refused_before_the_overlapping_fields_rule(api: Api) -> None:
    query = "{ " + "__typename " * (MAX_TOKENS - 2) + "}"
    assert len(query) <= MAX_CHARACTERS
    await _refused_before_anything_runs(
        api, query, "SAME_NAME_LIMIT_EXCEEDED", f"Allowed: {MAX_SAME_NAME}"
    )


async def test_same_named_fields_are_counted_through_fragments(api: Api) -> None:
    """Fields merged from inline fragments and from every expansion of a fragment count."""
    inline = "{ " + "... on Query { __typename } " * (MAX_SAME_NAME + 1) + "}"
    await _refused_before_anything_runs(
        api, inline, "SAME_NAME_LIMIT_EXCEEDED", f"{MAX_SAME_NAME + 1} fields named"
    )
    bomb = (
        "{ ...F0 } fragment F0 on Query { ...F1 ...F1 } fragment F1 on Query { ...F2 ...F2 }"
        " fragment F2 on Query { ...F3 ...F3 } fragment F3 on Query { ...F4 ...F4 }"
        " fragment F4 on Query { __typename }"
    )
    await _refused_before_anything_runs(
        api, bomb, "SAME_NAME_LIMIT_EXCEEDED", "16 fields named '__typename'"
    )


async def test_fields_repeated_inside_repeated_fields_are_refused_by_the_merge_limit(
    api: Api,
) -> None:
    """Three sessions, each with three edges, each with three nodes: within every limit of a
    selection set, but 27 nodes to compare in pairs; refused while being compared, with no
    call made."""
    query = nested_repeats(3, 3)
    assert token_count(query) < MAX_TOKENS
    api.reset_calls()
    for key in (None, API_KEYS[0]):
        body = await api.raw(query, key=key)
        assert body.get("data") is None, body
        assert [e["extensions"] for e in body["errors"]] == [
            {"code": "MERGE_LIMIT_EXCEEDED", "limit": MAX_MERGE_WORK}
        ], body
    assert api.calls == {}


def _merge_work(query: str) -> int:
    """The least merge work ``query`` is validated within."""
    document, low, high = parse(query), 0, 1 << 20
    while low < high:
        middle = (low + high) // 2
        try:
            run_rules(GRAPHQL_SCHEMA, document, MAX_ERRORS, merge_work=middle)
        except MergeWorkExceeded:
            low = middle + 1
        else:
            high = middle
    return low


def test_the_merge_limit_binds_at_its_bound() -> None:
    """A document whose merge work is exactly the limit is valid; one more unit is refused."""
    admitted, refused = nested_repeats(2, 4), nested_repeats(3, 3)
    assert _merge_work(admitted) <= MAX_MERGE_WORK < _merge_work(refused)
    work = _merge_work(refused)
    document = parse(refused)
    assert run_rules(GRAPHQL_SCHEMA, document, MAX_ERRORS, merge_work=work) == []
    with pytest.raises(MergeWorkExceeded):
        run_rules(GRAPHQL_SCHEMA, document, MAX_ERRORS, merge_work=work - 1)


async def test_over_websocket_the_document_is_refused_with_its_code(api: Api) -> None:
    async with api.http.ws_connect("/graphql", protocols=("graphql-transport-ws",)) as ws:
        await ws.send_json({"type": "connection_init"})
        assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": DENSE}})
        message = await ws.receive_json(timeout=WAIT)
    assert message["type"] == "error", message
    [error] = message["payload"]
    assert error["extensions"]["code"] == "TOKEN_LIMIT_EXCEEDED"
    assert f"more than {MAX_TOKENS} tokens" in error["message"]


def _characters(n: int) -> str:
    base = "{ __typename }\n#"
    return base + "x" * (n - len(base))


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
    """``n`` aliased boards of one field (11 tokens each)."""
    return "{ " + " ".join(f'a{i}: leaderboard(id: "x") {{ id }}' for i in range(n)) + " }"


_PAGE = (
    'leaderboard(id: "b") {{ topScores(first: {}) {{ edges {{ node {{ player {{ id }} }} }} }} }}'
)
"""A board's page of players: 2 points, and 1 a player."""


def _cost(n: int) -> str:
    """A document costing ``n`` points: pages of 100 players (102 points) and one of the
    rest."""
    full, rest = divmod(n, 102)
    pages = [_PAGE.format(100)] * full + [_PAGE.format(rest - 2)]
    return "{ " + " ".join(f"p{i}: {page}" for i, page in enumerate(pages)) + " }"


def _size(document: Any, n: int) -> int:
    """What the limit counts of the document built for ``n``."""
    query = document(n)
    if document is _characters:
        return len(query)
    if document is aliased_boards:
        return token_count(query)
    if document is _cost:
        return document_cost(GRAPHQL_SCHEMA, parse(query))
    return n


LIMITS = [
    pytest.param(_characters, MAX_CHARACTERS, "CHARACTER_LIMIT_EXCEEDED", id="characters"),
    pytest.param(aliased_boards, MAX_TOKENS, "TOKEN_LIMIT_EXCEEDED", id="tokens"),
    pytest.param(nested, MAX_DEPTH, "DEPTH_LIMIT_EXCEEDED", id="depth"),
    pytest.param(_aliases, MAX_ALIASES, "ALIAS_LIMIT_EXCEEDED", id="aliases"),
    pytest.param(_operations, MAX_OPERATIONS, "OPERATION_LIMIT_EXCEEDED", id="operations"),
    pytest.param(_fragments, MAX_FRAGMENTS, "FRAGMENT_LIMIT_EXCEEDED", id="fragments"),
    pytest.param(_spreads, MAX_SPREADS, "SPREAD_LIMIT_EXCEEDED", id="spreads"),
    pytest.param(_same_name, MAX_SAME_NAME, "SAME_NAME_LIMIT_EXCEEDED", id="same name"),
    pytest.param(_cost, MAX_COST, "COST_LIMIT_EXCEEDED", id="cost"),
]
"""Each limit on a document, with a document of any size for it: every limit binds at its own
bound, the others admitting the document one past it (the merge limit has its own test)."""


@pytest.mark.parametrize(("document", "limit", "code"), LIMITS)
async def test_each_limit_admits_its_limit_and_refuses_one_more_with_its_code(
    api: Api, document: Any, limit: int, code: str
) -> None:
    at_limit, over = document(limit), document(limit + 1)
    assert (_size(document, limit), _size(document, limit + 1)) == (limit, limit + 1)
    operation = {"operationName": "Q0"} if document is _operations else {}
    admitted = await _post(api, at_limit, operation)
    assert "errors" not in admitted, admitted
    assert admitted["data"], admitted
    refused = await _post(api, over, operation)
    assert refused.get("data") is None, refused
    [error] = refused["errors"]
    assert error["extensions"]["code"] == code, refused
    assert error["extensions"]["limit"] == limit, refused


async def test_forty_aliased_boards_of_one_field_are_answered(api: Api) -> None:
    """40 aliases is the alias limit: the tokens of 40 aliased one-field selections are well
    within the token limit, and the 41st is refused by the alias limit."""
    await api.create_board("x")
    query = _aliases(MAX_ALIASES)
    assert token_count(query) == 11 * MAX_ALIASES + 2 < MAX_TOKENS
    body = await api.raw(query, key=None)
    assert body == {
        "data": {f"a{i}": {"id": "x"} for i in range(MAX_ALIASES)},
        "extensions": body["extensions"],
    }
    refused = await api.raw(_aliases(MAX_ALIASES + 1), key=None)
    assert refused["errors"] == [
        {
            "message": f"{MAX_ALIASES + 1} aliases found. Allowed: {MAX_ALIASES}",
            "extensions": {"code": "ALIAS_LIMIT_EXCEEDED", "limit": MAX_ALIASES},
        }
    ]


async def test_eight_fragments_with_typename_fit_in_one_selection_set(api: Api) -> None:
    """Apollo Client adds ``__typename`` to every selection set, fragments' included: a
    selection set spreading the most fragments has that many ``__typename`` and its own."""
    query = (
        "{ __typename "
        + " ".join(f"...F{i}" for i in range(MAX_SPREADS))
        + " } "
        + " ".join(
            f"fragment F{i} on Query {{ __typename f{i}: __typename }}" for i in range(MAX_SPREADS)
        )
    )
    body = await api.raw(query, key=None)
    assert body["data"] == {"__typename": "Query", **{f"f{i}": "Query" for i in range(MAX_SPREADS)}}


SCREEN_VARIABLES = {
    "leaderboardId": "main",
    "familyId": "daily-run",
    "dailyFamilyId": "daily-run",
    "weeklyFamilyId": "weekly-run",
    "seasonId": "season",
    "gameId": "game-1",
    "playerId": "ann",
    "friendIds": ["bob", "cid"],
    "boardIds": ["main", "season"],
}


async def test_a_frontend_screen_of_fragments_is_answered(api: Api) -> None:
    """A leaderboard screen as a fragment-based frontend sends it (a fragment per component,
    ``__typename`` in every selection set, 668 tokens in 4,725 characters: over the former
    limits of 250 tokens and 4,096 characters) passes every limit and is answered."""
    query = FRONTEND.read_text()
    assert 600 <= token_count(query) <= MAX_TOKENS
    assert len(query) <= MAX_CHARACTERS
    for player in ("ann", "bob", "cid"):
        await api.create_player(player)
    for board in ("main", "season"):
        await api.create_board(board)
    await api.submit("ann", "main", 30)
    await api.submit("bob", "main", 20)
    await api.submit("ann", "season", 7)
    body = await api.raw(query, SCREEN_VARIABLES, key=None)
    assert "errors" not in body, body["errors"]
    data = body["data"]
    board = data["leaderboard"]
    assert (board["__typename"], board["id"], board["entryCount"]) == ("Leaderboard", "main", 2)
    rows = [e["node"] for e in board["topScores"]["edges"]]
    assert [(r["player"]["id"], r["score"], r["rank"]) for r in rows] == [
        ("ann", 30, 1),
        ("bob", 20, 2),
    ]
    assert [r["score"]["player"]["id"] for r in board["friends"]] == ["bob"]
    assert board["me"]["rank"] == 1
    assert data["season"]["me"]["score"]["score"] == 7
    assert [c["id"] for c in data["friendCards"]] == ["bob", "cid"]
    assert data["viewer"]["gamesPlayed"] == 2
    assert [s["rank"] for s in data["viewer"]["standings"]] == [1, 1]
    assert data["family"] is None
    assert body["extensions"]["cost"]["requestedQueryCost"] <= MAX_COST


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


def test_the_cache_keeps_documents_up_to_its_tokens() -> None:
    """Distinct documents of 1,000 tokens: the valid-document cache keeps the most recent ones
    up to VALIDATION_CACHE_TOKENS tokens (the memory of 256 documents of 250 tokens), not 256
    of them."""
    documents = Documents()
    queries = [aliased_boards(MAX_TOKENS).replace("a0:", f"first{i}:") for i in range(70)]
    for query in queries:
        assert documents.check(GRAPHQL_SCHEMA, query).errors == ()
    kept, tokens = documents.kept()
    assert (kept, tokens) == (VALIDATION_CACHE_TOKENS // MAX_TOKENS, VALIDATION_CACHE_TOKENS)
    parsed = STATS.parsed
    documents.check(GRAPHQL_SCHEMA, queries[-1])
    assert STATS.parsed == parsed, "the last document was dropped"
    documents.check(GRAPHQL_SCHEMA, queries[0])
    assert STATS.parsed == parsed + 1, "the first document was kept"


def _documented() -> list[Any]:
    documents = [
        pytest.param(path.read_text(), id=path.name)
        for path in sorted((ROOT / "examples" / "operations").glob("*.graphql"))
    ]
    documents.append(pytest.param(DEFAULT_QUERY, id="GraphiQL default"))
    documents.append(pytest.param(get_introspection_query(), id="introspection"))
    documents.append(
        pytest.param(
            GRAPHIQL_INTROSPECTION,
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
    """The benchmark's documents are built from the limits: the allowed ones pass, each refused
    one is refused by the limit it is past (or by the specification's rules)."""
    from bench.validation.documents import worst_documents

    outcomes = {}
    for name, query in worst_documents():
        checked = check_document(GRAPHQL_SCHEMA, query)
        outcomes[name] = (
            (checked.errors[0].extensions or {}).get("code", "rules") if checked.errors else "valid"
        )
    assert sorted(set(outcomes.values())) == [
        "ALIAS_LIMIT_EXCEEDED",
        "CHARACTER_LIMIT_EXCEEDED",
        "MERGE_LIMIT_EXCEEDED",
        "SAME_NAME_LIMIT_EXCEEDED",
        "TOKEN_LIMIT_EXCEEDED",
        "rules",
        "valid",
    ], outcomes
    assert list(outcomes.values()).count("valid") == 12, outcomes
    assert outcomes["GraphiQL's introspection query"] == "valid"
    assert outcomes[f"{MAX_TOKENS} tokens in {MAX_CHARACTERS} characters (a comment)"] == "valid"
    assert (
        outcomes["the amplification query (40 aliases of nested pages)"] == "TOKEN_LIMIT_EXCEEDED"
    )
    assert outcomes["4,000 __typename tokens (the finding)"] == "CHARACTER_LIMIT_EXCEEDED"
