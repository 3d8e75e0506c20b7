"""The worst documents the validation limits allow, and the ones just past each limit that they
refuse: what :mod:`bench.validation.cli` times."""

from __future__ import annotations

from graphql import (
    Lexer,
    Source,
    TokenKind,
    get_introspection_query,
)

from gql.validation import (
    MAX_ALIASES,
    MAX_CHARACTERS,
    MAX_DEPTH,
    MAX_ERRORS,
    MAX_FRAGMENTS,
    MAX_OPERATIONS,
    MAX_SAME_NAME,
    MAX_SPREADS,
    MAX_TOKENS,
)

__all__ = ["token_count", "worst_documents"]

_NESTED = (
    'leaderboard(id: "b") { topScores(first: 100) { edges { node { score rank player { id name '
    "scores(first: 100) { edges { node { score } } } "
    "sessions(first: 100) { edges { node { score } } } } } } } }"
)


def _deep() -> str:
    """A player's sessions' players' sessions ...: nested MAX_DEPTH - 1 deep."""
    inner = "id name"
    for _ in range(2):
        inner = f"sessions(first: 100) {{ edges {{ node {{ id player {{ {inner} }} }} }} }}"
    return f'{{ player(id: "p") {{ {inner} }} }}'


def token_count(document: str) -> int:
    lexer = Lexer(Source(document))
    count = 0
    while lexer.advance().kind is not TokenKind.EOF:
        count += 1
    return count


def _max_tokens() -> str:
    """MAX_TOKENS tokens, valid: aliased ``__type`` fields of 11 and 12 tokens."""
    rest = MAX_TOKENS - 2
    longer = rest % 11
    fields = [f'a{i}: __type(name: "Query") {{ name }}' for i in range((rest - 12 * longer) // 11)]
    fields += [f'b{i}: __type(name: "Query") {{ name kind }}' for i in range(longer)]
    return "{ " + " ".join(fields) + " }"


def _same_names() -> str:
    """MAX_SAME_NAME boards, each with MAX_SAME_NAME of the same fields: the overlapping-fields
    rule compares every pair, arguments and sub-selections included."""
    inner = " ".join(["name"] * MAX_SAME_NAME + ["id"] * MAX_SAME_NAME)
    board = f'leaderboard(id: "b") {{ {inner} }}'
    player = f'player(id: "p") {{ {" ".join(["name"] * MAX_SAME_NAME)} }}'
    return "{ " + " ".join([board] * MAX_SAME_NAME + [player] * MAX_SAME_NAME) + " }"


def worst_documents() -> list[tuple[str, str]]:
    """(name, query): the costliest shapes within each limit, and some over them."""
    chain = " ".join(
        f"fragment F{i} on Query {{ f{i}: __typename ...F{i + 1} }}"
        for i in range(MAX_FRAGMENTS - 1)
    )
    return [
        (f"{MAX_TOKENS} tokens (22 aliased __type fields)", _max_tokens()),
        (
            f"{MAX_TOKENS} tokens: {MAX_TOKENS - 12} ids in one list argument",
            '{ players(ids: ["' + '" "'.join(["p"] * (MAX_TOKENS - 12)) + '"]) { id } }',
        ),
        (f"overlapping fields: {MAX_SAME_NAME} x {MAX_SAME_NAME} same-named", _same_names()),
        (
            f"{MAX_ALIASES} aliases",
            "{ " + " ".join(f"a{i}: __typename" for i in range(MAX_ALIASES)) + " }",
        ),
        (f"depth {MAX_DEPTH - 1}", _deep()),
        (
            f"{MAX_FRAGMENTS} fragments in a chain",
            f"{{ ...F0 }} {chain} fragment F{MAX_FRAGMENTS - 1} on Query {{ __typename }}",
        ),
        (
            f"{MAX_SPREADS} spreads per selection set",
            "{ "
            + " ".join(f"...F{i}" for i in range(MAX_SPREADS))
            + " } "
            + " ".join(
                f"fragment F{i} on Query {{ f{i}: __typename }}" for i in range(MAX_SPREADS)
            ),
        ),
        (
            f"{MAX_OPERATIONS} operations",
            " ".join(
                f"query Q{i} {{ " + "__typename " * MAX_SAME_NAME + "}"
                for i in range(MAX_OPERATIONS)
            ),
        ),
        (
            "GraphiQL's introspection query",
            get_introspection_query(
                descriptions=True,
                specified_by_url=True,
                directive_is_repeatable=True,
                schema_description=True,
                input_value_deprecation=True,
            ),
        ),
        (
            f"unknown fields ({MAX_ERRORS} errors reported)",
            "{ " + " ".join(f"nope{i}" for i in range(MAX_TOKENS - 2)) + " }",
        ),
        ("4,000 __typename tokens (the finding)", "{ " + "__typename " * 4000 + "}"),
        (
            "the amplification query (40 aliases of nested pages)",
            "{ " + " ".join(f"a{i}: {_NESTED}" for i in range(40)) + " }",
        ),
        (
            f"{MAX_CHARACTERS} characters of single-letter fields",
            "{" + " a" * (MAX_CHARACTERS // 2 - 1) + "}",
        ),
        (
            f"{MAX_TOKENS - 2} __typename in one selection set",
            "{ " + "__typename " * (MAX_TOKENS - 2) + "}",
        ),
        (
            "inline fragments of 5 __typename each (240 tokens)",
            "{ " + ("... on Query { " + "__typename " * 5 + "} ") * 24 + "}",
        ),
        (
            f"{MAX_FRAGMENTS} fragments each spread twice (2^{MAX_FRAGMENTS - 1} expansions)",
            "{ ...F0 } "
            + " ".join(
                f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}"
                for i in range(MAX_FRAGMENTS - 1)
            )
            + f" fragment F{MAX_FRAGMENTS - 1} on Query {{ __typename }}",
        ),
    ]
