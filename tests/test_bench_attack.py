"""The under-attack benchmark's documents: each the costliest the limits admit, valid under the
service's document limits, and admitted by the service at the cost the benchmark states."""

from __future__ import annotations

from dataclasses import replace

import pytest
from graphql import GraphQLError, parse, specified_rules, validate

from bench.attack.documents import (
    ATTACKS,
    MAX_CHARACTERS,
    MAX_LIST,
    MAX_TOKENS,
    AttackDocument,
    attack_documents,
    check,
    token_count,
)
from edge.cost_model import MAX_COST
from edge.cost_walk import document_cost
from edge.limits import measure_operations
from edge.schema import GRAPHQL_SCHEMA, LIMIT_RULE, MAX_ALIASES, MAX_DEPTH
from tests.conftest import Api

DOCUMENTS = attack_documents()


def test_there_is_a_document_of_each_shape() -> None:
    assert [d.name for d in DOCUMENTS] == [name for name, _, _ in ATTACKS]
    assert len({d.query for d in DOCUMENTS}) == len(ATTACKS)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
def test_each_document_is_valid_under_the_document_limits(document: AttackDocument) -> None:
    parsed = parse(document.query, max_tokens=MAX_TOKENS)
    assert validate(GRAPHQL_SCHEMA, parsed, [*specified_rules, LIMIT_RULE]) == []
    assert len(document.query) <= MAX_CHARACTERS
    assert token_count(document.query) <= MAX_TOKENS
    ((_, measure),) = measure_operations(parsed)
    assert measure.depth <= MAX_DEPTH
    assert measure.aliases <= MAX_ALIASES


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
def test_each_document_is_the_costliest_of_its_shape_the_limit_admits(
    document: AttackDocument,
) -> None:
    cost = document_cost(GRAPHQL_SCHEMA, parse(document.query), document.name, document.variables)
    assert cost == document.cost
    assert 0.95 * MAX_COST <= cost <= MAX_COST
    if document.size < MAX_LIST:
        build = next(b for name, _, b in ATTACKS if name == document.name)
        query, variables = build(document.size + 1)
        assert document_cost(GRAPHQL_SCHEMA, parse(query), document.name, variables) > MAX_COST


def test_token_count_is_what_the_parser_limits() -> None:
    query = DOCUMENTS[0].query
    tokens = token_count(query)
    parse(query, max_tokens=tokens)
    with pytest.raises(GraphQLError, match="more than"):
        parse(query, max_tokens=tokens - 1)


def test_check_refuses_a_document_below_or_over_the_limit() -> None:
    top = DOCUMENTS[0]
    build = next(b for name, _, b in ATTACKS if name == top.name)
    for size in (top.size // 2, top.size + 1):
        query, variables = build(size)
        cost = document_cost(GRAPHQL_SCHEMA, parse(query), top.name, variables)
        with pytest.raises(ValueError, match="cost"):
            check(replace(top, query=query, variables=variables, size=size, cost=cost))


def test_check_refuses_a_document_over_the_token_limit() -> None:
    top = DOCUMENTS[0]
    padded = top.query.replace("name\n", "name " + "name " * MAX_TOKENS, 1)
    with pytest.raises(ValueError, match="tokens"):
        check(replace(top, query=padded))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
async def test_the_service_admits_each_document_anonymously_at_its_cost(
    api: Api, document: AttackDocument
) -> None:
    body = await api.raw(document.query, document.variables, key=None)
    assert "errors" not in body, body["errors"]
    cost = body["extensions"]["cost"]
    assert cost["requestedQueryCost"] == document.cost
    assert cost["maximumQueryCost"] == MAX_COST
