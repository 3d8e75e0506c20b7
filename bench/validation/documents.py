"""The worst documents the validation limits allow, and the ones just past each limit that they
refuse: what :mod:`bench.validation.cli` times.

Every document is built from the limits in :mod:`edge.validation`, so that when a limit changes
the documents follow it: the allowed ones are at the limit (or as close as the others let them
be), the refused ones one past it.
"""

from __future__ import annotations

from pathlib import Path

from graphql import (
    Lexer,
    Source,
    TokenKind,
    get_introspection_query,
)

from edge.validation import (
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

__all__ = [
    "FRONTEND",
    "GRAPHIQL_INTROSPECTION",
    "aliased_boards",
    "nested",
    "nested_repeats",
    "token_count",
    "worst_documents",
]

FRONTEND = Path(__file__).resolve().parents[2] / "tests" / "documents" / "LeaderboardScreen.graphql"
"""A leaderboard screen as a fragment-based frontend sends it: a fragment per component (board
header, score row, player card, page info), ``__typename`` in every selection set as Apollo
Client adds it, printed as graphql-js prints it."""

_NESTED = (
    'leaderboard(id: "b") { topScores(first: 100) { edges { node { score rank player { id name '
    "scores(first: 100) { edges { node { score } } } "
    "sessions(first: 100) { edges { node { score } } } } } } } }"
)

_BOARD_FIELDS = (
    "id",
    "name",
    "period",
    "sortOrder",
    "operator",
    "scoreWidth",
    "minScore",
    "maxScore",
    "startsAt",
    "endsAt",
    "entryCount",
    "expiresAt",
)
"""The scalar fields of a Leaderboard."""

_CHAIN = ("sessions", "edges", "node", "player")
"""Below a player, a path that returns to a player every 4 fields."""


GRAPHIQL_INTROSPECTION = get_introspection_query(
    descriptions=True,
    specified_by_url=True,
    directive_is_repeatable=True,
    schema_description=True,
    input_value_deprecation=True,
)
"""The introspection query GraphiQL sends, with every option it asks for."""


def token_count(document: str) -> int:
    """The tokens of ``document`` as the parser's token limit counts them: comments too."""
    lexer = Lexer(Source(document))
    first = lexer.token
    while lexer.advance().kind is not TokenKind.EOF:
        pass
    count = 0
    token = first.next
    while token is not None and token.kind is not TokenKind.EOF:
        count += 1
        token = token.next
    return count


def _split(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` parts differing by at most one."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def aliased_boards(tokens: int, aliases: int = MAX_ALIASES) -> str:
    """``tokens`` tokens: ``aliases`` aliased boards, each with its share of scalar fields (a
    board with its braces is 10 tokens, and one more a field)."""
    fields = tokens - 2 - 10 * aliases
    boards = [
        f'a{i}: leaderboard(id: "b") {{ '
        + " ".join(_BOARD_FIELDS[j % len(_BOARD_FIELDS)] for j in range(count))
        + " }"
        for i, count in enumerate(_split(fields, aliases))
    ]
    return "{ " + " ".join(boards) + " }"


_LAST = (
    'entry(leaderboardId: "b") { score }',
    "pageInfo { hasNextPage }",
    "node { id }",
    "player { id }",
)
"""Below a player, sessions, edges and node: a field whose selection set has scalars only."""


def nested(depth: int) -> str:
    """A player's sessions' players' sessions ...: ``depth`` fields with selection sets nested
    in each other."""
    if depth == 1:
        return '{ player(id: "p") { id } }'
    inner = _LAST[(depth - 2) % 4]
    for level in reversed(range(depth - 2)):
        inner = f"{_CHAIN[level % 4]} {{ {inner} }}"
    return f'{{ player(id: "p") {{ {inner} }} }}'


def _deep() -> str:
    return nested(MAX_DEPTH)


def nested_repeats(copies: int, levels: int) -> str:
    """Below one player, ``copies`` copies of each field of the path sessions, edges, node,
    ... for ``levels`` fields, ``copies`` ids at the bottom: within every per-selection-set
    limit, but each level multiplies the fields merged below it."""
    inner = " ".join(["id"] * copies)
    for level in reversed(range(levels)):
        field = _CHAIN[level % 4]
        inner = " ".join([f"{field} {{ {inner} }}"] * copies)
    if levels % 4 not in (0, 3):  # end on a player or a session: they have ids
        raise ValueError("nested_repeats ends on a type without an id")
    return f'{{ player(id: "p") {{ {inner} }} }}'


def _same_names(copies: int) -> str:
    """``copies`` boards, each with ``copies`` of the same fields, and as many players: the
    overlapping-fields rule compares every pair, arguments and sub-selections included."""
    inner = " ".join(["name"] * copies + ["id"] * copies)
    board = f'leaderboard(id: "b") {{ {inner} }}'
    player = f'player(id: "p") {{ {" ".join(["name"] * copies)} }}'
    return "{ " + " ".join([board] * copies + [player] * copies) + " }"


def _padded(query: str) -> str:
    """``query`` followed by a comment up to MAX_CHARACTERS: the most text the lexer reads."""
    return query + "\n#" + "x" * (MAX_CHARACTERS - len(query) - 2)


def worst_documents() -> list[tuple[str, str]]:
    """(name, query): the costliest shapes within each limit, and some over them."""
    chain = " ".join(
        f"fragment F{i} on Query {{ f{i}: __typename ...F{i + 1} }}"
        for i in range(MAX_FRAGMENTS - 1)
    )
    apollo_spreads = (
        "{ __typename "
        + " ".join(f"...F{i}" for i in range(MAX_SPREADS))
        + " } "
        + " ".join(
            f"fragment F{i} on Query {{ __typename f{i}: __typename }}" for i in range(MAX_SPREADS)
        )
    )
    return [
        (
            f"{MAX_TOKENS} tokens: {MAX_ALIASES} aliased boards of scalar fields",
            aliased_boards(MAX_TOKENS),
        ),
        (
            f"{MAX_TOKENS} tokens in {MAX_CHARACTERS} characters (a comment)",
            _padded(aliased_boards(MAX_TOKENS - 1)),
        ),
        (
            f"{MAX_TOKENS} tokens: {MAX_TOKENS - 12} ids in one list argument",
            '{ players(ids: ["' + '" "'.join(["p"] * (MAX_TOKENS - 12)) + '"]) { id } }',
        ),
        ("a frontend's screen: 9 fragments, __typename everywhere", FRONTEND.read_text()),
        (
            f"{MAX_ALIASES} aliased boards of one field",
            "{ "
            + " ".join(f'a{i}: leaderboard(id: "x") {{ id }}' for i in range(MAX_ALIASES))
            + " }",
        ),
        ("overlapping fields: 5 x 5 same-named", _same_names(5)),
        ("repeated fields: 2 x 2 x 2 x 2 x 2 below a player", nested_repeats(2, 4)),
        (f"depth {MAX_DEPTH}", _deep()),
        (
            f"{MAX_FRAGMENTS} fragments in a chain",
            f"{{ ...F0 }} {chain} fragment F{MAX_FRAGMENTS - 1} on Query {{ __typename }}",
        ),
        (f"{MAX_SPREADS} spreads in one selection set, each with __typename", apollo_spreads),
        (
            f"{MAX_OPERATIONS} operations",
            " ".join(
                f"query Q{i} {{ " + "__typename " * MAX_SAME_NAME + "}"
                for i in range(MAX_OPERATIONS)
            ),
        ),
        (
            "GraphiQL's introspection query",
            GRAPHIQL_INTROSPECTION,
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
        (f"{MAX_TOKENS + 1} tokens", aliased_boards(MAX_TOKENS + 1)),
        (
            f"{MAX_CHARACTERS} characters of single-letter fields",
            "{" + " a" * (MAX_CHARACTERS // 2 - 1) + "}",
        ),
        (
            f"{MAX_ALIASES + 1} aliased boards of one field",
            "{ "
            + " ".join(f'a{i}: leaderboard(id: "x") {{ id }}' for i in range(MAX_ALIASES + 1))
            + " }",
        ),
        (
            f"overlapping fields: {MAX_SAME_NAME} x {MAX_SAME_NAME} same-named",
            _same_names(MAX_SAME_NAME),
        ),
        ("repeated fields: 4 x 4 x 4 x 4 below a player", nested_repeats(4, 3)),
        (
            f"{MAX_TOKENS - 2} __typename in one selection set",
            "{ " + "__typename " * (MAX_TOKENS - 2) + "}",
        ),
        (
            f"inline fragments of {MAX_SAME_NAME} __typename each",
            "{ "
            + ("... on Query { " + "__typename " * MAX_SAME_NAME + "} ")
            * ((MAX_TOKENS - 2) // (MAX_SAME_NAME + 5))
            + "}",
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
