"""The service's limits on GraphQL documents, as the fuzz tests expect them, and a token
counter that reads a document the way the service's lexer does."""

from __future__ import annotations

import contextlib

from graphql import Lexer, Source, TokenKind

MAX_DEPTH = 10
MAX_ALIASES = 40
MAX_TOKENS = 1000
MAX_CHARACTERS = 12_000
MAX_FRAGMENTS = 20
"""Fragment definitions per document: the longest chain of spreads is one less."""
MAX_SPREADS = 8
"""Fragment spreads per selection set."""
MAX_SAME_NAME = 9
"""Fields of one response name per selection set."""


def token_count(document: str) -> int:
    """The tokens of ``document`` up to the first it cannot read, comments included (the
    parser's token limit counts them)."""
    lexer = Lexer(Source(document))
    first = lexer.token
    with contextlib.suppress(Exception):
        while lexer.advance().kind is not TokenKind.EOF:
            pass
    count = 0
    token = first.next
    while token is not None and token.kind is not TokenKind.EOF:
        count += 1
        token = token.next
    return count
