"""Parsing and validating a document, bounded.

A document is parsed by :func:`edge.parser.parse_document` (graphql-core's AST, in a fraction
of graphql-core's instructions; graphql-core's parser words every syntax error). It is refused,
cheapest check first, when its text is over :data:`MAX_CHARACTERS`, when
it has more than :data:`MAX_TOKENS` tokens (the parser stops there), when it breaks a structural
limit (operations, fragments, fragment spreads or fields of one response name per selection set,
depth, aliases: :func:`edge.limits.structural_errors`, in time linear in the document), and only
then by the rules of the GraphQL specification. Those run in two ways with one outcome: first
:func:`edge.fast_rules.valid`, one walk with the schema's types that answers "valid" only when the
rules would find nothing; when it is not sure, the rules in full (:mod:`edge.rules`), whose
costliest one (OverlappingFieldsCanBeMerged, quadratic in the fields of one response name) the
structural limits and :data:`MAX_MERGE_WORK` bound, and which word every error. A document over a
limit is refused with that limit's own code (``TOKEN_LIMIT_EXCEEDED``, ``ALIAS_LIMIT_EXCEEDED``,
...) and the limit in ``extensions.limit``; one the specification's rules refuse, with
GRAPHQL_VALIDATION_FAILED. At most :data:`MAX_ERRORS` errors are reported, without "did you
mean" suggestions.

The limits are set so that each one can be reached: within :data:`MAX_TOKENS`, a document can
exceed every other limit, and :data:`MAX_CHARACTERS` holds :data:`MAX_TOKENS` tokens as a
frontend prints them (about 7 characters a token, deeper indentation included).

The outcome of a document is kept by its text in :class:`edge.document_cache.Documents`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphql import DocumentNode, GraphQLError, GraphQLSchema

from dynamo.errors import ErrorCode
from edge import fast_rules
from edge.limits import (
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
    over_limit,
    structural_errors,
)
from edge.parser import parse_document
from edge.rules import MergeWorkExceeded, run_rules

__all__ = [
    "MAX_ALIASES",
    "MAX_CHARACTERS",
    "MAX_DEPTH",
    "MAX_ERRORS",
    "MAX_FRAGMENTS",
    "MAX_MERGE_WORK",
    "MAX_OPERATIONS",
    "MAX_SAME_NAME",
    "MAX_SPREADS",
    "MAX_TOKENS",
    "STATS",
    "Checked",
    "check_document",
]


@dataclass
class Stats:
    """How often the costly steps ran: a document served from the cache runs none of them."""

    parsed: int = 0
    validated: int = 0
    """Documents within the limits checked by the specification's rules, either way."""
    fast: int = 0
    """Of those, the documents :func:`edge.fast_rules.valid` found valid."""
    full: int = 0
    """Of those, the documents the rules checked in full (:func:`edge.rules.run_rules`)."""


STATS = Stats()


@dataclass(frozen=True)
class Checked:
    """A document parsed and validated: its AST (None when it did not parse), and the errors
    refusing it (none when it is valid)."""

    document: DocumentNode | None
    errors: tuple[GraphQLError, ...] = ()
    tokens: int = 0
    """The document's tokens, comments included (its parsed form keeps each of them)."""


def _refusal(message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"code": ErrorCode.GRAPHQL_VALIDATION_FAILED.value})


def _capped(errors: Iterator[GraphQLError] | list[GraphQLError]) -> tuple[GraphQLError, ...]:
    kept: list[GraphQLError] = []
    for error in errors:
        if len(kept) == MAX_ERRORS - 1:
            kept.append(
                _refusal("Too many validation errors, error limit reached. Validation aborted.")
            )
            break
        kept.append(error)
    return tuple(kept)


def _tokens(document: DocumentNode) -> int:
    """The document's tokens, as the parser counted them (comments included)."""
    count = getattr(document, "token_count", 0)
    return count if isinstance(count, int) else 0


_TOO_MANY_TOKENS = f"Document contains more than {MAX_TOKENS} tokens. Parsing aborted."
"""How the parser's syntax error for the token limit ends."""


def check_document(schema: GraphQLSchema, query: str) -> Checked:
    """Parse and validate ``query`` against ``schema``, uncached."""
    if len(query) > MAX_CHARACTERS:
        message = f"Document has {len(query)} characters. Allowed: {MAX_CHARACTERS}"
        over = over_limit(ErrorCode.CHARACTER_LIMIT_EXCEEDED, MAX_CHARACTERS, message)
        return Checked(None, (over,))
    STATS.parsed += 1
    try:
        document = parse_document(query, max_tokens=MAX_TOKENS)
    except GraphQLError as error:
        if error.message.endswith(_TOO_MANY_TOKENS):
            over = over_limit(ErrorCode.TOKEN_LIMIT_EXCEEDED, MAX_TOKENS, error.message)
            return Checked(None, (over,))
        return Checked(None, (_refusal(error.message),))
    except RecursionError:  # pragma: no cover - the token limit keeps nesting shallow
        return Checked(None, (_refusal("Document nested too deeply to parse."),))
    tokens = _tokens(document)
    refused = _capped(structural_errors(document))
    if refused:
        return Checked(document, refused, tokens)
    STATS.validated += 1
    if fast_rules.valid(schema, document, MAX_MERGE_WORK):
        STATS.fast += 1
        return Checked(document, (), tokens)
    STATS.full += 1
    try:
        errors = run_rules(schema, document, MAX_ERRORS, merge_work=MAX_MERGE_WORK)
    except MergeWorkExceeded:
        message = (
            "Checking that fields of one response name can be merged takes more than"
            f" {MAX_MERGE_WORK} units: fewer fields repeated inside repeated fields"
        )
        over = over_limit(ErrorCode.MERGE_LIMIT_EXCEEDED, MAX_MERGE_WORK, message)
        return Checked(document, (over,), tokens)
    return Checked(document, _capped(errors), tokens)
