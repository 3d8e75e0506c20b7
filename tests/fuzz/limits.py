"""The service's limits on GraphQL documents, as the fuzz tests expect them, and a token
counter that reads a document the way the service's lexer does."""

from __future__ import annotations

import contextlib

from graphql import Lexer, Source, TokenKind

MAX_DEPTH = 10
MAX_ALIASES = 40
MAX_TOKENS = 250
MAX_CHARACTERS = 4096
MAX_FRAGMENTS = 20
"""Fragment definitions per document: the longest chain of spreads is one less."""
MAX_SPREADS = 8
"""Fragment spreads per selection set."""
MAX_SAME_NAME = 5
"""Fields of one response name per selection set."""


def token_count(document: str) -> int:
    lexer = Lexer(Source(document))
    count = 0
    with contextlib.suppress(Exception):
        while lexer.advance().kind is not TokenKind.EOF:
            count += 1
    return count
