"""edge.parser.parse_document returns what graphql-core's ``parse`` returns, node for node
(classes, attribute values, locations and their tokens, the token count), or raises the same
error; and it parses the documents of its grammar itself, without graphql-core."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from graphql import (
    DocumentNode,
    GraphQLError,
    Lexer,
    Location,
    Node,
    Source,
    Token,
    TokenKind,
    get_introspection_query,
    parse,
    validate,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.validation.documents import GRAPHIQL_INTROSPECTION, worst_documents
from edge.parser import MAX_FAST_NESTING, STATS, ParseStats, parse_document
from edge.schema import GRAPHQL_SCHEMA
from edge.validation import MAX_TOKENS
from tests.docs_pages import example_pages, graphql_blocks

ROOT = Path(__file__).resolve().parent.parent

HYPOTHESIS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# The comparison: every attribute of every node, every location and its tokens.


def _token_fields(token: Token | None) -> tuple[Any, ...] | None:
    if token is None:
        return None
    return (token.kind, token.start, token.end, token.line, token.column, token.value)


def _compare_loc(expected: Location | None, actual: Location | None, path: str) -> None:
    if expected is None or actual is None:
        assert expected is actual, f"{path}: location {expected!r} != {actual!r}"
        return
    assert isinstance(actual, Location), f"{path}: {type(actual)} is not a Location"
    assert (actual.start, actual.end) == (expected.start, expected.end), (
        f"{path}: location {actual.start}:{actual.end} != {expected.start}:{expected.end}"
    )
    sources = (expected.source, actual.source)
    assert len({(s.body, s.name, s.location_offset) for s in sources}) == 1, f"{path}: source"
    for end in ("start_token", "end_token"):
        wanted, got = getattr(expected, end), getattr(actual, end)
        assert _token_fields(got) == _token_fields(wanted), f"{path}.{end}: {got!r} != {wanted!r}"
        for link in ("prev", "next"):
            assert _token_fields(getattr(got, link)) == _token_fields(getattr(wanted, link)), (
                f"{path}.{end}.{link}"
            )


def _compare(expected: Any, actual: Any, path: str = "document") -> None:
    """Raise AssertionError naming the path of the first difference."""
    assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
    if isinstance(expected, Node):
        assert list(vars(actual)) == list(vars(expected)), (
            f"{path}: attributes {list(vars(actual))} != {list(vars(expected))}"
        )
        for key, value in vars(expected).items():
            if key == "loc":
                _compare_loc(value, actual.loc, f"{path}.loc")
            else:
                _compare(value, vars(actual)[key], f"{path}.{key}")
    elif isinstance(expected, tuple):
        assert len(actual) == len(expected), f"{path}: {len(actual)} items != {len(expected)}"
        for index, (wanted, got) in enumerate(zip(expected, actual, strict=True)):
            _compare(wanted, got, f"{path}[{index}]")
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def _all_tokens(document: DocumentNode) -> list[tuple[Any, ...] | None]:
    assert document.loc is not None
    found = []
    token: Token | None = document.loc.start_token
    while token is not None:
        found.append(_token_fields(token))
        token = token.next
    return found


def assert_same_ast(expected: DocumentNode, actual: DocumentNode) -> None:
    """Node for node, and the whole chain of tokens, comments included."""
    _compare(expected, actual)
    assert actual.token_count == expected.token_count
    assert _all_tokens(actual) == _all_tokens(expected)


def _outcome(parser: Any, query: str, max_tokens: int) -> DocumentNode | tuple[Any, ...]:
    try:
        return parser(query, max_tokens=max_tokens)  # type: ignore[no-any-return]
    except GraphQLError as error:
        return (error.message, error.locations, error.positions)


def assert_same_outcome(query: str, max_tokens: int = MAX_TOKENS) -> bool:
    """Both parse ``query`` alike, or both refuse it with the same error; True if it parses."""
    expected = _outcome(parse, query, max_tokens)
    actual = _outcome(parse_document, query, max_tokens)
    if isinstance(expected, DocumentNode):
        assert isinstance(actual, DocumentNode), f"refused: {actual}"
        assert_same_ast(expected, actual)
        return True
    assert actual == expected
    return False


@contextmanager
def counted() -> Iterator[ParseStats]:
    """How many documents each way parsed while the block ran (set when it ends)."""
    seen = ParseStats()
    fast, fallback = STATS.fast, STATS.fallback
    yield seen
    seen.fast, seen.fallback = STATS.fast - fast, STATS.fallback - fallback


# The documents of the project.


def _documented_examples() -> list[tuple[str, str]]:
    """Every GraphQL block of the README and of the hand-written pages of docs/, by page."""
    return [
        (f"{path.relative_to(ROOT).as_posix()} block {n}", block)
        for path in example_pages()
        for n, block in enumerate(graphql_blocks(path.read_text()))
    ]


def _corpus() -> list[tuple[str, str]]:
    files = sorted((ROOT / "tests").rglob("*.graphql")) + sorted(
        (ROOT / "examples").rglob("*.graphql")
    )
    return [
        *worst_documents(),
        *((str(path.relative_to(ROOT)), path.read_text()) for path in files),
        ("introspection", get_introspection_query()),
        (
            "introspection, every option",
            GRAPHIQL_INTROSPECTION,
        ),
        *_documented_examples(),
    ]


CORPUS = _corpus()


@pytest.mark.parametrize(("name", "query"), CORPUS, ids=[name for name, _ in CORPUS])
def test_the_projects_documents_parse_as_graphql_core_parses_them(name: str, query: str) -> None:
    assert_same_outcome(query)


def test_every_document_graphql_core_accepts_takes_the_fast_path() -> None:
    accepted = [query for _, query in CORPUS if assert_same_outcome(query)]
    assert len(accepted) >= 25
    with counted() as seen:
        for query in accepted:
            parse_document(query, max_tokens=MAX_TOKENS)
    assert (seen.fast, seen.fallback) == (len(accepted), 0)


def test_documents_outside_the_fast_path_get_graphql_cores_ast_or_error() -> None:
    """Syntax errors of every kind, the type system, descriptions, too many tokens, too deep."""
    others = [
        "",
        "# only a comment",
        "{",
        "{ a(b: ) }",
        "{ a(b: $c) } extra",
        "type Query { a: Int }",
        '"description" query { a }',
        "query ($a: Int = $b) { a }",
        "{ a(b: 01) }",
        "{ a(b: 1.) }",
        "{ a(b: 1e) }",
        "{ a(b: .5) }",
        "{ a(b: 1a) }",
        '{ a(b: "\\x") }',
        '{ a(b: "\\u{110000}") }',
        '{ a(b: "\\uD800") }',
        '{ a(b: "\\uDC00\\uD800") }',
        '{ a(b: "unterminated) }',
        '{ a(b: """unterminated) }',
        '{ a(b: """a"""") }',
        "{ a(b: 'single') }",
        "{ a.. }",
        "{ a & b }",
        "{ a | b }",
        "{ a\x00 }",
        "{ a\ud800 }",
        "{ é }",
        "{ ...on }",
        "fragment on on T { a }",
        "fragment F T { a }",
        "{ a(b: [1, 2) }",
        "{ a(b: {c 1}) }",
        "query Q($a: [Int!]!!) { a }",
        "{ a }" + "\n# comment" * MAX_TOKENS,
        "{ " + "[" * 201 + "]" * 201 + " }",
        "{ a(b: " + "[" * 201 + "]" * 201 + ") }",
        "{a" * 201 + "}" * 201,
    ]
    for query in others:
        with counted() as seen:
            assert_same_outcome(query)
        assert (seen.fast, seen.fallback) == (0, 1), query


def test_the_token_limit_counts_comments_as_graphql_core_does() -> None:
    query = "{ a b c }"  # 5 tokens
    for comments in range(4):
        document = query + "\n# note" * comments
        for limit in range(4, 10):
            assert_same_outcome(document, max_tokens=limit)
    message = f"Syntax Error: Document contains more than {MAX_TOKENS} tokens. Parsing aborted."
    with counted() as seen, pytest.raises(GraphQLError) as refused:
        parse_document("{" + " a" * (MAX_TOKENS - 2) + " # one too many\n}", max_tokens=MAX_TOKENS)
    assert refused.value.message == message
    assert (seen.fast, seen.fallback) == (0, 1)


def test_documents_nested_past_the_fast_paths_depth_parse_as_graphql_core_parses_them() -> None:
    for depth in (MAX_FAST_NESTING - 1, MAX_FAST_NESTING + 1, 100):
        assert assert_same_outcome("{a" * depth + "}" * depth)
        assert assert_same_outcome("{ a(b: " + "[" * depth + "]" * depth + ") }")
        assert assert_same_outcome("query($a: " + "[" * depth + "Int" + "]" * depth + ") { a }")


def test_validation_errors_point_where_graphql_cores_do() -> None:
    query = (
        'query Q($v: Boolean, $unused: Int) {\r\n  leaderboard(id: "b") { nope @skip(if: $v) }\n'
        "  # a comment\n  player { ...F }\r  x: nope2\n}\nfragment F on Player { id name(a: 1) }"
    )
    expected = validate(GRAPHQL_SCHEMA, parse(query, max_tokens=MAX_TOKENS))
    actual = validate(GRAPHQL_SCHEMA, parse_document(query, max_tokens=MAX_TOKENS))
    assert len(expected) >= 4
    assert [(e.message, e.locations) for e in actual] == [
        (e.message, e.locations) for e in expected
    ]


def test_a_copied_or_pickled_document_is_the_same_document() -> None:
    query = (ROOT / "tests" / "documents" / "LeaderboardScreen.graphql").read_text()

    def pickled(document: DocumentNode) -> DocumentNode:
        copied: DocumentNode = pickle.loads(pickle.dumps(document))
        return copied

    for copied in (copy.deepcopy, pickled):
        _compare(copied(parse(query)), copied(parse_document(query, max_tokens=MAX_TOKENS)))


# Generated documents: every part of the grammar of executable documents, each part a list
# of tokens; the strategies are built once.

Tokens = st.SearchStrategy[list[str]]

_IGNORED = [" ", "  ", "\n", "\r\n", "\r", "\t", ",", " , ", "\ufeff", " # a comment\n", "#\r\n"]
_PUNCTUATORS = {"{", "}", "(", ")", "[", "]", ":", "=", "@", "$", "!", "..."}
_NOTHING: Tokens = st.just([])

names = st.one_of(
    st.from_regex(r"[_A-Za-z][_0-9A-Za-z]{0,6}", fullmatch=True),
    st.sampled_from(["on", "query", "fragment", "true", "false", "null", "type", "__typename"]),
)
type_names = names.filter(lambda name: name != "on")
_CHARACTERS = st.one_of(
    st.sampled_from(list('abc #{}()"\\/\t\x00\x1f\u00e9\u4e2d\U0001f600,.')),
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
)
_ESCAPES = st.sampled_from(
    [
        '\\"',
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\n",
        "\\r",
        "\\t",
        "\\u00e9",
        "\\u0000",
        "\\uD83D\\uDE00",
        "\\u{1F600}",
        "\\u{41}",
        "\\u{00000041}",
        "\\uFFFF",
    ]
)
strings = st.lists(
    st.one_of(_ESCAPES, _CHARACTERS.filter(lambda c: c not in '"\\\n\r')), max_size=8
).map(lambda parts: '"' + "".join(parts) + '"')

_BLOCK_LINES = st.lists(
    st.one_of(
        st.sampled_from([" ", "  ", "\t", '\\"""', '"', '""', "\\", "a", "#", "\u00e9"]),
        _CHARACTERS.filter(lambda c: c not in '"\\\r\n'),
    ),
    max_size=6,
).map("".join)


def _one_block_string(text: str) -> bool:
    """Whether graphql-core reads ``text`` as one block string (no unescaped three quotes in
    it, no quote or backslash against its end)."""
    try:
        token = Lexer(Source(text)).advance()
    except GraphQLError:
        return False
    return token.kind is TokenKind.BLOCK_STRING and token.end == len(text)


block_strings = (
    st.lists(st.tuples(_BLOCK_LINES, st.sampled_from(["\n", "\r\n", "\r", ""])), max_size=5)
    .map(lambda lines: '"""' + "".join(text + end for text, end in lines) + '"""')
    .filter(_one_block_string)
)
numbers = st.one_of(
    st.integers(-(10**12), 10**12).map(str),
    st.from_regex(r"-?(0|[1-9][0-9]{0,3})(\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?", fullmatch=True),
)


def _flat(parts: Any) -> list[str]:
    return [token for part in parts for token in part]


def _values(*, const: bool) -> Tokens:
    scalars = st.one_of(numbers, strings, block_strings, names).map(lambda token: [token])
    if not const:
        scalars = st.one_of(scalars, names.map(lambda name: ["$", name]))

    def extend(inner: Tokens) -> Tokens:
        lists = st.lists(inner, max_size=3).map(lambda items: ["[", *_flat(items), "]"])
        fields = st.lists(st.tuples(names, inner), max_size=3).map(
            lambda pairs: ["{", *_flat([name, ":", *value] for name, value in pairs), "}"]
        )
        return st.one_of(lists, fields)

    return st.recursive(scalars, extend, max_leaves=4)


def _arguments(values: Tokens) -> Tokens:
    argument = st.tuples(names, values).map(lambda pair: [pair[0], ":", *pair[1]])
    listed = st.lists(argument, min_size=1, max_size=2)
    return st.one_of(_NOTHING, listed.map(lambda items: ["(", *_flat(items), ")"]))


def _directives(arguments: Tokens) -> Tokens:
    directive = st.tuples(names, arguments).map(lambda pair: ["@", pair[0], *pair[1]])
    return st.lists(directive, max_size=2).map(_flat)


VALUES, CONST_VALUES = _values(const=False), _values(const=True)
ARGUMENTS, CONST_ARGUMENTS = _arguments(VALUES), _arguments(CONST_VALUES)
DIRECTIVES, CONST_DIRECTIVES = _directives(ARGUMENTS), _directives(CONST_ARGUMENTS)

TYPES = st.recursive(
    type_names.map(lambda name: [name]),
    lambda inner: st.one_of(
        inner.map(lambda tokens: ["[", *tokens, "]"]),
        inner.filter(lambda tokens: tokens[-1] != "!").map(lambda tokens: [*tokens, "!"]),
    ),
    max_leaves=3,
)


def _selections(inner: Tokens) -> Tokens:
    alias = st.one_of(_NOTHING, names.map(lambda name: [name, ":"]))
    field = st.tuples(alias, names.map(lambda name: [name]), ARGUMENTS, DIRECTIVES).map(_flat)
    field_with_selections = st.tuples(field, st.one_of(_NOTHING, inner)).map(_flat)
    spread = st.tuples(type_names, DIRECTIVES).map(lambda pair: ["...", pair[0], *pair[1]])
    condition = st.one_of(_NOTHING, type_names.map(lambda name: ["on", name]))
    inline = st.tuples(condition, DIRECTIVES, inner).map(lambda parts: ["...", *_flat(parts)])
    selection = st.one_of(field_with_selections, field, spread, inline)
    return st.lists(selection, max_size=3).map(lambda items: ["{", *_flat(items), "}"])


SELECTION_SETS = st.recursive(st.just(["{", "}"]), _selections, max_leaves=5)

_DEFAULT = st.one_of(_NOTHING, CONST_VALUES.map(lambda value: ["=", *value]))
_VARIABLE_DEFINITION = st.tuples(names, TYPES, _DEFAULT, CONST_DIRECTIVES).map(
    lambda parts: ["$", parts[0], ":", *_flat(parts[1:])]
)
VARIABLE_DEFINITIONS = st.one_of(
    _NOTHING,
    st.lists(_VARIABLE_DEFINITION, min_size=1, max_size=3).map(
        lambda items: ["(", *_flat(items), ")"]
    ),
)
OPERATIONS = st.tuples(
    st.sampled_from(["query", "mutation", "subscription"]).map(lambda word: [word]),
    st.one_of(_NOTHING, names.map(lambda name: [name])),
    VARIABLE_DEFINITIONS,
    DIRECTIVES,
    SELECTION_SETS,
).map(_flat)
FRAGMENTS = st.tuples(type_names, type_names, DIRECTIVES, SELECTION_SETS).map(
    lambda parts: ["fragment", parts[0], "on", parts[1], *parts[2], *parts[3]]
)
DEFINITIONS = st.one_of(SELECTION_SETS, OPERATIONS, FRAGMENTS)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """An executable document, its tokens apart by ignored characters (now and then none,
    beside a punctuator)."""
    tokens = _flat(draw(st.lists(DEFINITIONS, min_size=1, max_size=3)))
    rng = draw(st.randoms(use_true_random=False))
    gaps = [
        ""
        if (before in _PUNCTUATORS or after in _PUNCTUATORS) and rng.random() < 0.3
        else rng.choice(_IGNORED)
        for before, after in pairwise(["", *tokens, ""])
    ]
    gaps[0] = gaps[0] if rng.random() < 0.5 else ""
    gaps[-1] = gaps[-1] if rng.random() < 0.5 else ""
    return "".join(gap + token for gap, token in zip(gaps, [*tokens, ""], strict=True))


DOCUMENTS = documents()


@HYPOTHESIS
@given(DOCUMENTS)
def test_generated_documents_parse_as_graphql_core_parses_them_on_the_fast_path(
    query: str,
) -> None:
    assert assert_same_outcome(query, max_tokens=10_000)
    with counted() as seen:
        parse_document(query, max_tokens=10_000)
    assert (seen.fast, seen.fallback) == (1, 0)


_MUTATIONS = st.sampled_from(
    [*'"\\.#{}()[]:$@!=,-0e \n\r\t', "\x00", "\ud800", "\u00e9", "&", "|", "'", '"""']
)


@st.composite
def near_misses(draw: st.DrawFn) -> str:
    """A valid document with a few characters deleted, repeated, inserted, or cut short."""
    text = draw(st.one_of(DOCUMENTS, st.sampled_from([query for _, query in CORPUS[:12]])))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        change = draw(st.sampled_from(["delete", "repeat", "insert", "truncate"]))
        if change == "delete":
            text = text[:at] + text[at + 1 :]
        elif change == "repeat":
            text = text[:at] + text[at : at + 1] * 2 + text[at + 1 :]
        elif change == "insert":
            text = text[:at] + draw(_MUTATIONS) + text[at:]
        else:
            text = text[:at]
    return text


@HYPOTHESIS
@given(near_misses(), st.sampled_from([MAX_TOKENS, 30]))
def test_near_misses_parse_or_fail_as_graphql_core_does(query: str, max_tokens: int) -> None:
    assert_same_outcome(query, max_tokens=max_tokens)
