"""The service's limits on GraphQL documents, as the fuzz tests expect them, and a token
counter that reads a document the way the service's lexer does."""

from __future__ import annotations

import contextlib

from graphql import Lexer, Source, TokenKind

MAX_DEPTH = 10
LONGEST_VALIDATED_CHAIN = 198
"""Longer chains exhaust graphql-core's budget of fragment work in validation (50,000 spreads
and variable usages): a typed "Validation aborted." refusal."""
MAX_ALIASES = 40
MAX_TOKENS = 4000


def token_count(document: str) -> int:
    lexer = Lexer(Source(document))
    count = 0
    with contextlib.suppress(Exception):
        while lexer.advance().kind is not TokenKind.EOF:
            count += 1
    return count
