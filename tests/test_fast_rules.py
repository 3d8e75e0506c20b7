"""The fast path of validation (edge/fast_rules.py) answers "valid" only for documents the rules
in full find valid within the merge limit, and does so for every valid document the service
documents; with it, check_document refuses exactly what it refused, with the same codes and
messages, and runs the rules in full only when the fast path is not sure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    OverlappingFieldsCanBeMergedRule,
    TypeInfo,
    TypeInfoVisitor,
    ValidationContext,
    build_schema,
    get_introspection_query,
    parse,
    visit,
)
from hypothesis import HealthCheck, given, settings

from bench.validation.documents import (
    FRONTEND,
    GRAPHIQL_INTROSPECTION,
    nested_repeats,
    worst_documents,
)
from edge.fast_rules import merged, valid
from edge.limits import MAX_ERRORS, MAX_MERGE_WORK, MAX_SAME_NAME, MAX_TOKENS
from edge.rules import MergeWorkExceeded, run_rules
from edge.schema import GRAPHQL_SCHEMA
from edge.validation import STATS, check_document
from leaderboard.graphiql import DEFAULT_QUERY
from tests.docs_pages import example_pages, graphql_blocks, operations
from tests.fuzz.schema_documents import schema_document, schema_documents
from tests.test_rules import INVALID, _random_documents

ROOT = Path(__file__).resolve().parent.parent
UNBOUNDED = 1 << 30
"""A merge bound no document of the token limit reaches."""


def _documented_operations() -> list[tuple[str, str]]:
    """Each operation of the GraphQL examples of the README and of the hand-written pages of
    docs/ (a block may hold several anonymous ones, which are sent one at a time), by page."""
    return [
        (f"{path.relative_to(ROOT).as_posix()} {n}", op)
        for path in example_pages()
        for n, op in enumerate(
            op for block in graphql_blocks(path.read_text()) for op in operations(block)
        )
    ]


def _valid_documents() -> list[Any]:
    """The valid documents the service documents or benchmarks."""
    documents = [
        pytest.param(query, id=f"bench: {name}")
        for name, query in worst_documents()
        if not check_document(GRAPHQL_SCHEMA, query).errors
    ]
    files = sorted((ROOT / "tests").rglob("*.graphql")) + sorted(
        (ROOT / "examples" / "operations").glob("*.graphql")
    )
    documents += [pytest.param(path.read_text(), id=path.name) for path in files]
    documents += [pytest.param(op, id=name) for name, op in _documented_operations()]
    documents.append(pytest.param(DEFAULT_QUERY, id="GraphiQL default"))
    documents.append(pytest.param(get_introspection_query(), id="introspection"))
    documents.append(
        pytest.param(
            GRAPHIQL_INTROSPECTION,
            id="GraphiQL introspection",
        )
    )
    return documents


VALID = _valid_documents()

DOCUMENTS = [
    *VALID,
    *(
        pytest.param(query, id=f"bench: {name}")
        for name, query in worst_documents()
        if check_document(GRAPHQL_SCHEMA, query).errors
    ),
    *(pytest.param(query, id=f"invalid {i}") for i, query in enumerate(INVALID)),
    *(pytest.param(query, id=f"random {i}") for i, query in enumerate(_random_documents(60))),
]


ABSTRACT = build_schema(
    """
    interface Node { id: ID! }
    interface Named { name(upper: Boolean): String }
    type Dog implements Node & Named {
      id: ID! name(upper: Boolean): String barks: Boolean size: Int owner: Person
      friends(first: Int = 10): [Pet!]!
    }
    type Cat implements Node & Named {
      id: ID! name(upper: Boolean): String meows: Boolean size: String owner: Person
      friends(first: Int): [Pet!]!
    }
    type Person implements Node & Named {
      id: ID! name(upper: Boolean): String pets(kind: Kind): [Pet] best: Pet
    }
    union Pet = Dog | Cat
    input Filter { name: String ids: [ID!] nested: Filter kind: Kind = DOG min: Int! = 0 }
    enum Kind { DOG CAT }
    type Query {
      node(id: ID!): Node pets(filter: Filter, first: Int): [Pet] person(id: ID): Person
      search(term: String!): [Named] named: Named
    }
    type Mutation { rename(id: ID!, name: String!): Node }
    type Subscription { petAdded(kind: Kind): Pet }
    """
)
"""A schema of interfaces and unions (the service's has none): fragments on abstract types,
and fields of one response name on distinct object types, which the overlapping-fields rule
compares as mutually exclusive."""


def _full(
    document: DocumentNode, schema: GraphQLSchema = GRAPHQL_SCHEMA
) -> tuple[list[GraphQLError], bool]:
    """The rules in full: their errors, and whether they ran out of merge work."""
    try:
        return run_rules(schema, document, MAX_ERRORS, merge_work=MAX_MERGE_WORK), False
    except MergeWorkExceeded:
        return [], True


def _graphql_core_merge_work(document: DocumentNode, schema: GraphQLSchema) -> int:
    """The work graphql-core's OverlappingFieldsCanBeMergedRule does on the document, in its
    own units."""
    type_info = TypeInfo(schema)
    context = ValidationContext(schema, document, type_info, lambda _error: None)
    rule = OverlappingFieldsCanBeMergedRule(context)
    rule.rule_context.remaining_complexity_budget = UNBOUNDED
    visit(document, TypeInfoVisitor(type_info, rule))
    return UNBOUNDED - rule.rule_context.remaining_complexity_budget


def _assert_sure_only_of_valid(query: str, schema: GraphQLSchema = GRAPHQL_SCHEMA) -> bool:
    """Checks the fast path on ``query``; True when it is sure the document is valid."""
    try:
        document = parse(query, max_tokens=MAX_TOKENS)
    except GraphQLError:
        return False
    work = merged(schema, document, MAX_MERGE_WORK)
    if work is None:
        return False
    errors, exceeded = _full(document, schema)
    assert (errors, exceeded) == ([], False), query
    assert work == _graphql_core_merge_work(document, schema) <= MAX_MERGE_WORK, query
    return True


@pytest.mark.parametrize("query", DOCUMENTS)
def test_the_fast_path_is_sure_only_of_documents_the_rules_find_valid(query: str) -> None:
    _assert_sure_only_of_valid(query)


@pytest.mark.parametrize("query", VALID)
def test_every_documented_valid_document_takes_the_fast_path(query: str) -> None:
    assert _assert_sure_only_of_valid(query)
    fast, full = STATS.fast, STATS.full
    assert check_document(GRAPHQL_SCHEMA, query).errors == ()
    assert (STATS.fast, STATS.full) == (fast + 1, full)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_documents(GRAPHQL_SCHEMA))
def test_the_fast_path_is_sure_only_of_generated_documents_the_rules_find_valid(
    query: str,
) -> None:
    _assert_sure_only_of_valid(query)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_documents(ABSTRACT))
def test_the_fast_path_is_sure_only_of_valid_documents_of_abstract_types(query: str) -> None:
    _assert_sure_only_of_valid(query, ABSTRACT)


@pytest.mark.parametrize(
    ("query", "sure"),
    [
        ("{ pets { ... on Dog { name(upper: true) } ... on Cat { name } } }", True),
        ("{ pets { ... on Dog { size } ... on Cat { size } } }", False),
        ("{ named { ... on Dog { name(upper: true) } ... on Named { name } } }", False),
        (
            "{ pets { ...D ...C } } fragment D on Dog { a: barks } fragment C on Cat { a: meows }",
            True,
        ),
        ("{ node(id: 1) { ... on Pet { __typename } ... on Person { id } } }", True),
        ("{ person { ... on Dog { id } } }", False),
        ("{ person { best { ... on Node { id } ... on Dog { owner { id } } } } }", True),
    ],
)
def test_fields_on_distinct_object_types_are_compared_as_the_rules_compare_them(
    query: str, sure: bool
) -> None:
    """Fields of one response name on two object types never apply together: they may differ
    in name and arguments, not in type; on an interface and an object they may not differ."""
    assert _assert_sure_only_of_valid(query, ABSTRACT) is sure
    assert (_full(parse(query), ABSTRACT)[0] == []) is sure


def test_the_generated_documents_are_often_valid_and_then_sure() -> None:
    """The generator writes valid documents often enough for the properties above to test the
    fast path's "valid", and the fast path is sure of those (the first 100 seeds)."""
    found = {"valid": 0, "sure": 0}
    for seed in range(100):
        try:
            document = parse(schema_document(GRAPHQL_SCHEMA, seed), max_tokens=MAX_TOKENS)
        except GraphQLError:
            continue
        found["valid"] += _full(document) == ([], False)
        found["sure"] += valid(GRAPHQL_SCHEMA, document, MAX_MERGE_WORK)
    assert found["valid"] >= 10, found
    assert found["sure"] == found["valid"], found


def _least_merge_work(document: DocumentNode) -> int:
    """The least merge bound within which run_rules validates the document."""
    low, high = 0, UNBOUNDED
    while low < high:
        middle = (low + high) // 2
        try:
            run_rules(GRAPHQL_SCHEMA, document, MAX_ERRORS, merge_work=middle)
        except MergeWorkExceeded:
            low = middle + 1
        else:
            high = middle
    return low


@pytest.mark.parametrize(
    "query",
    [
        pytest.param(nested_repeats(2, 4), id="repeated fields 2 x 2 x 2 x 2 x 2"),
        pytest.param(nested_repeats(3, 3), id="repeated fields 3 x 3 x 3 x 3"),
        pytest.param(FRONTEND.read_text(), id="frontend screen"),
    ],
)
def test_the_fast_path_binds_at_the_merge_bound_the_rules_bind_at(query: str) -> None:
    """Sure within the least bound the rules validate the document in, not sure one unit
    below it."""
    document = parse(query)
    least = _least_merge_work(document)
    assert merged(GRAPHQL_SCHEMA, document, least) == least
    assert merged(GRAPHQL_SCHEMA, document, least - 1) is None


@pytest.mark.parametrize("query", [*INVALID, *_random_documents(60)])
def test_a_document_the_rules_refuse_gets_their_errors(query: str) -> None:
    checked = check_document(GRAPHQL_SCHEMA, query)
    document = parse(query)
    expected = run_rules(GRAPHQL_SCHEMA, document, MAX_ERRORS, merge_work=MAX_MERGE_WORK)
    if not expected:
        assert checked.errors == ()
        return
    found = [(e.message, e.locations) for e in checked.errors]
    assert found[: MAX_ERRORS - 1] == [(e.message, e.locations) for e in expected][: MAX_ERRORS - 1]


def test_a_refused_document_runs_the_rules_in_full() -> None:
    fast, full = STATS.fast, STATS.full
    checked = check_document(GRAPHQL_SCHEMA, '{ leaderboard(id: "b") { nope } }')
    assert [e.message for e in checked.errors] == [
        "Cannot query field 'nope' on type 'Leaderboard'."
    ]
    assert (STATS.fast, STATS.full) == (fast, full + 1)


def _typenames(count: int) -> str:
    return (
        f"{count} fields named '__typename' in one selection set, fragments included."
        f" Allowed: {MAX_SAME_NAME}"
    )


MERGE = (
    "Checking that fields of one response name can be merged takes more than 2000 units:"
    " fewer fields repeated inside repeated fields"
)
TOKENS = "Syntax Error: Document contains more than 1000 tokens. Parsing aborted."
REFUSED = {
    "unknown fields (10 errors reported)": [
        *((None, f"Cannot query field 'nope{i}' on type 'Query'.") for i in range(MAX_ERRORS - 1)),
        (
            "GRAPHQL_VALIDATION_FAILED",
            "Too many validation errors, error limit reached. Validation aborted.",
        ),
    ],
    "4,000 __typename tokens (the finding)": [
        ("CHARACTER_LIMIT_EXCEEDED", "Document has 44003 characters. Allowed: 12000")
    ],
    "the amplification query (40 aliases of nested pages)": [("TOKEN_LIMIT_EXCEEDED", TOKENS)],
    "1001 tokens": [("TOKEN_LIMIT_EXCEEDED", TOKENS)],
    "12000 characters of single-letter fields": [("TOKEN_LIMIT_EXCEEDED", TOKENS)],
    "41 aliased boards of one field": [("ALIAS_LIMIT_EXCEEDED", "41 aliases found. Allowed: 40")],
    "overlapping fields: 9 x 9 same-named": [("MERGE_LIMIT_EXCEEDED", MERGE)],
    "repeated fields: 4 x 4 x 4 x 4 below a player": [("MERGE_LIMIT_EXCEEDED", MERGE)],
    "998 __typename in one selection set": [("SAME_NAME_LIMIT_EXCEEDED", _typenames(998))],
    "inline fragments of 9 __typename each": [("SAME_NAME_LIMIT_EXCEEDED", _typenames(639))],
    "20 fragments each spread twice (2^19 expansions)": [
        *(("SAME_NAME_LIMIT_EXCEEDED", _typenames(2**k)) for k in range(4, 4 + MAX_ERRORS - 1)),
        (
            "GRAPHQL_VALIDATION_FAILED",
            "Too many validation errors, error limit reached. Validation aborted.",
        ),
    ],
}
"""The benchmark's refused documents, and what they are refused with."""


def test_the_refused_documents_of_the_benchmark_are_refused_as_before() -> None:
    refused = {}
    for name, query in worst_documents():
        errors = check_document(GRAPHQL_SCHEMA, query).errors
        if errors:
            refused[name] = [((e.extensions or {}).get("code"), e.message) for e in errors]
    assert refused == REFUSED


def test_the_structural_limits_report_every_breach_in_their_order() -> None:
    """Depth, then aliases, operations and fragments, then each selection set's spreads and
    same-named fields (the last definition's first, a selection set before those in it)."""
    deep = "player { " * 7 + "id" + " }" * 7
    query = (
        f'query Deep {{ player(id: "p") {{ sessions {{ edges {{ node {{ {deep} }} }} }} }} }}'
        " query Wide { "
        + " ".join(f"a{i}: __typename" for i in range(41))
        + " __typename ...F ...F ...F ...F ...F ...F ...F ...F ...F }"
        + " fragment F on Query { __typename }"
        + " fragment G on Query { ... on Query { "
        + "__typename " * 10
        + "} }"
    )
    errors = [
        ((e.extensions or {})["code"], e.message)
        for e in check_document(GRAPHQL_SCHEMA, query).errors
    ]
    assert errors == [
        ("DEPTH_LIMIT_EXCEEDED", "'Deep' exceeds maximum operation depth of 10"),
        ("ALIAS_LIMIT_EXCEEDED", "41 aliases found. Allowed: 40"),
        ("SAME_NAME_LIMIT_EXCEEDED", _typenames(10)),
        ("SAME_NAME_LIMIT_EXCEEDED", _typenames(10)),
        ("SPREAD_LIMIT_EXCEEDED", "9 fragment spreads in one selection set. Allowed: 8"),
        ("SAME_NAME_LIMIT_EXCEEDED", _typenames(10)),
    ]
