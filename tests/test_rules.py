"""The specification's rules as :func:`edge.rules.run_rules` runs them report what
``graphql.validate`` reports, error for error, on valid and invalid documents alike."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from graphql import get_introspection_query, parse, validate
from graphql.language import ast

from bench.validation.documents import FRONTEND, nested_repeats
from edge.rules import RULES, MergeWorkExceeded, run_rules
from edge.schema import GRAPHQL_SCHEMA

ROOT = Path(__file__).resolve().parent.parent

INVALID = [
    "{ nope }",
    "query($a: Int) { __typename }",
    "query { leaderboard(id: $x) { id } }",
    "query($x: Int) { leaderboard(id: $x) { id } }",
    "{ ...F } fragment F on Query { ...G } fragment G on Query { ...F }",
    '{ leaderboard(id: "b") { id @skip(if: true) @skip(if: true) } }',
    "{ __typename @nope }",
    "query A { __typename } query A { __typename }",
    "{ a } { b }",
    "fragment F on Nope { x } { ...F }",
    '{ leaderboard(id: "b") { a: id a: name } }',
    '{ leaderboard(id: "b") { topScores(first: "x") { edges { cursor } } } }',
    '{ player(id: "p") { ... on Leaderboard { id } } }',
    "{ leaderboard { id } }",
    '{ leaderboard(id: "b", id: "c") { id } }',
    "subscription { a: __typename b: __typename }",
    'mutation { submitScore(input: {playerId: "p", playerId: "q", gameId: "g", score: 1}) '
    "{ improved } }",
    '{ leaderboard(id: "b") }',
    "query Q($a: Int, $a: Int) { __typename } fragment F on Query { ...on Query { x } }",
    "type T { a: Int } { __typename }",
    "{ ...Missing }",
    'query($f: Int = "x") { leaderboard(id: "b") { topScores(first: $f) { edges { cursor } } } }',
    'query($v: Boolean) { player(id: "p") { id @include(if: $v) ...F } } '
    "fragment F on Player { name(x: $w) sessions { edges { node { id(y: $v) } } } }",
]


def _random_documents(count: int) -> list[str]:
    """Documents mixing valid and invalid fields, variables, fragments and directives."""
    rng = random.Random(7)
    parts = [
        "id",
        "name",
        "__typename",
        "nope",
        'leaderboard(id: "b") { id }',
        "player { id }",
        "rankOf(playerId: $x) { rank }",
        "...F",
        "name @skip(if: $v)",
        "a: id",
        "a: name",
        "family { id ...on LeaderboardFamily { name } }",
    ]
    return [
        f"query($x: ID, $v: Boolean!) {{ leaderboard(id: $x) {{"
        f" {' '.join(rng.choice(parts) for _ in range(rng.randint(1, 12)))} }} }}"
        f" fragment F on Leaderboard {{ {rng.choice(parts)} }}"
        for _ in range(count)
    ]


def _documents() -> list[str]:
    documents = [path.read_text() for path in sorted((ROOT / "examples" / "operations").glob("*"))]
    documents += [FRONTEND.read_text(), get_introspection_query(descriptions=True)]
    return documents + INVALID + _random_documents(60)


@pytest.mark.parametrize("query", _documents())
@pytest.mark.parametrize("most", [10, 2])
def test_run_rules_reports_what_graphql_validate_reports(query: str, most: int) -> None:
    expected = validate(
        GRAPHQL_SCHEMA, parse(query), RULES, max_errors=most - 1, hide_suggestions=True
    )
    found = run_rules(GRAPHQL_SCHEMA, parse(query), most)
    # graphql-core adds its own last error when it stops; run_rules stops at ``most``.
    assert [(e.message, e.locations) for e in found[: most - 1]] == [
        (e.message, e.locations) for e in expected[: most - 1]
    ]
    assert len(found) == len(expected)


def test_a_node_hash_is_its_structural_hash_kept() -> None:
    """Equal documents parsed apart hash alike (a node's hash is computed from its fields)."""
    first, second = parse(FRONTEND.read_text()), parse(FRONTEND.read_text())
    assert first is not second
    assert first == second
    assert hash(first) == hash(second)
    assert first.__dict__["_hash"] == hash(first)
    assert isinstance(first.definitions[0], ast.OperationDefinitionNode)


def test_merge_work_bounds_the_overlapping_fields_rule() -> None:
    """Without a bound, the rule compares 27 nodes of three sessions in pairs; with one, it
    stops there."""
    document = parse(nested_repeats(3, 3))
    assert run_rules(GRAPHQL_SCHEMA, document, 10) == []
    with pytest.raises(MergeWorkExceeded):
        run_rules(GRAPHQL_SCHEMA, document, 10, merge_work=100)
