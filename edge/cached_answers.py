"""Whole answers of hot queries served from the process's response cache.

A query is answered from the cache only when its document selects nothing but fields whose
values the cache knows how to keep exact (:data:`CACHEABLE_FIELDS`: a board's rules and
entry count, its first page of entries with their ranks, cursors and players' names). Its
answer is stored under a key of the query text, the operation's name, its variables and the
caller's role (callers of one role see the same data; roles see different fields), with what
the resolvers recorded reading (resolvers/dependencies.py). An answer with an error, or one
whose execution read anything else (a later page), is not stored.

A hit skips execution: the answer's ``data`` comes from the cache as the JSON bytes stored
(:class:`EncodedData`), which :func:`encode_response` writes into the response as they are,
neither decoded nor encoded again; everything before execution (admission, the cost check,
the anonymous caller's allowance) still runs, and ``extensions`` are made for the request as
usual (``dynamodbCalls`` is 0). A response is encoded the same way whether its data was run or
stored, so an answer has the same bytes (and entity tag) from the cache as from execution.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

import orjson
from graphql import (
    BREAK,
    DocumentNode,
    FieldNode,
    GraphQLSchema,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    visit,
)
from graphql import ExecutionResult as GraphQLExecutionResult
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from edge.document_cache import VALIDATION_CACHE_SIZE
from resolvers.context import Context, Role
from resolvers.dependencies import Dependencies
from resolvers.response_cache import ResponseCache

__all__ = [
    "CACHEABLE_FIELDS",
    "CachedAnswers",
    "EncodedData",
    "answer_key",
    "cacheable",
    "encode_json",
    "encode_response",
]

_BOARD_FIELDS = (
    "id",
    "name",
    "period",
    "sortOrder",
    "operator",
    "scoreWidth",
    "partitions",
    "minScore",
    "maxScore",
    "startsAt",
    "endsAt",
    "entryCount",
    "expiresAt",
    "topScores",
)

CACHEABLE_FIELDS = frozenset(
    {("Query", "leaderboard")}
    | {("Leaderboard", name) for name in _BOARD_FIELDS}
    | {("ScoreConnection", "edges"), ("ScoreConnection", "pageInfo")}
    | {("ScoreEdge", "cursor"), ("ScoreEdge", "node")}
    | {("PageInfo", n) for n in ("hasNextPage", "hasPreviousPage", "startCursor", "endCursor")}
    | {("Score", n) for n in ("score", "rank", "attainedAt", "sessionId", "metadata", "player")}
    | {("Player", "id"), ("Player", "name")}
)
"""The fields (type, field) an answer from the cache may hold: each one's value is kept
exact by the notices of its board's entries, its board's item, or its player's name.
``__typename`` is allowed anywhere."""


class _Finder(Visitor):
    def __init__(self, type_info: TypeInfo) -> None:
        super().__init__()
        self.type_info = type_info
        self.other = False

    def enter_field(self, node: FieldNode, *_: Any) -> Any:
        name = node.name.value
        if name == "__typename":
            return None
        parent = self.type_info.get_parent_type()
        if parent is None or (parent.name, name) not in CACHEABLE_FIELDS:
            self.other = True
            return BREAK
        return None


_CACHEABLE: OrderedDict[bytes, bool] = OrderedDict()
"""Whether a document is cacheable, by a digest of its text (not the text: documents may be
long)."""


def cacheable(schema: GraphQLSchema, query: str, document: DocumentNode) -> bool:
    """Whether every field the document selects (in any operation or fragment) is one a
    cached answer may hold; remembered for the most recent documents (the service has one
    schema)."""
    digest = hashlib.blake2b(query.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    found = _CACHEABLE.get(digest)
    if found is None:
        type_info = TypeInfo(schema)
        finder = _Finder(type_info)
        visit(document, TypeInfoVisitor(type_info, finder))
        found = not finder.other
        _CACHEABLE[digest] = found
        while len(_CACHEABLE) > VALIDATION_CACHE_SIZE:
            _CACHEABLE.popitem(last=False)
    else:
        _CACHEABLE.move_to_end(digest)
    return found


def answer_key(
    query: str, operation_name: str | None, variables: Mapping[str, Any] | None, role: Role
) -> bytes | None:
    """The cache key of an answer: 256 bits of BLAKE2b over the query text, the operation's
    name, the variables (as canonical JSON) and the caller's role. None when the variables
    have no canonical JSON form."""
    try:
        canonical = json.dumps(
            [int(role), operation_name, dict(variables or {}), query],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError):
        return None
    return hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=32).digest()


class EncodedData:
    """A query's ``data`` already encoded as JSON: an answer from the response cache, which
    only :func:`encode_response` writes (anything else encoding it fails loudly, never with
    empty data)."""

    __slots__ = ("json",)

    def __init__(self, encoded: bytes) -> None:
        self.json = encoded


_STRICT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""What orjson would encode and the standard library refuses, it leaves to the fallback."""

_SHORT_EXPONENT = re.compile(rb"e-\d(?!\d)").search
"""Where orjson may have written a float below 1e-4 in an exponent of one digit (``1e-7``,
where the standard library writes ``1e-07``); below that, a float it writes in full
(``0.00001`` for ``1e-05``) holds ``0.0000``. The same text inside a string only sends that
answer to the fallback. (A search that begins with its literal: a tenth of the cost of one
that begins with a digit.)"""


def _may_differ(encoded: bytes) -> bool:
    """Whether orjson's ``encoded`` may differ from the standard library's encoding."""
    return not encoded.isascii() or b"0.0000" in encoded or _SHORT_EXPONENT(encoded) is not None


def encode_json(value: object) -> bytes:
    """Compact JSON, non-ASCII characters escaped (a string holding a lone surrogate, which
    an error message may echo, stays encodable). orjson writes it (a page of 100 entries in
    a tenth of the standard library's time) when its output is all ASCII and the two cannot
    differ; anything else (a character to escape, a float below 1e-4, an integer past 64
    bits, a key that is not text) is written by the standard library: the same bytes either
    way (but for NaN and infinity, which JSON lacks and no GraphQL answer holds: orjson
    writes null)."""
    try:
        encoded = orjson.dumps(value, option=_STRICT)
    except TypeError:
        encoded = None
    if encoded is not None and not _may_differ(encoded):
        return encoded
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def encode_response(response: object) -> bytes:
    """The JSON of a GraphQL response (or a batch of them); a response whose ``data`` is
    :class:`EncodedData` has those bytes spliced in as they are, its other members encoded as
    :func:`encode_json` would."""
    if not isinstance(response, dict) or not isinstance(response.get("data"), EncodedData):
        return encode_json(response)
    parts = [b'{"data":', response["data"].json]
    for name, member in response.items():
        if name != "data":
            parts += [b",", encode_json(name), b":", encode_json(member)]
    parts.append(b"}")
    return b"".join(parts)


class CachedAnswers(SchemaExtension):
    """Answers a cacheable query from the response cache, or runs it and stores its answer
    when it read nothing but known dependencies and nothing changed them meanwhile."""

    async def on_execute(self) -> AsyncIterator[None]:
        execution = self.execution_context
        context = execution.context
        cache = context.responses if isinstance(context, Context) else None
        key = self._key() if cache is not None else None
        if cache is None or key is None or not isinstance(context, Context):
            yield
            return
        body = cache.get(key)
        if body is not None:
            # The stored bytes stand for the data until the response is encoded.
            data = cast("dict[str, Any]", EncodedData(body))
            execution.result = GraphQLExecutionResult(data=data)
            yield
            return
        started = cache.begin()
        recorded = context.dependencies = Dependencies()
        try:
            yield
        finally:
            context.dependencies = None
        _store(cache, key, execution.result, recorded, started)

    def _key(self) -> bytes | None:
        """The answer's key, when the operation is a query the cache may answer."""
        execution = self.execution_context
        context = execution.context
        if (
            not isinstance(context, Context)
            or not context.cache_answers
            or context.dependencies is not None  # another execution of the same request
            or execution.result is not None
            or execution.pre_execution_errors
            or execution.query is None
            or execution.graphql_document is None
            or execution.operation_type is not OperationType.QUERY
            or not cacheable(execution.schema._schema, execution.query, execution.graphql_document)
        ):
            return None
        return answer_key(
            execution.query, execution.operation_name, execution.variables, context.caller.role
        )


def _store(
    cache: ResponseCache, key: bytes, result: object, recorded: Dependencies, started: int
) -> None:
    if not isinstance(result, GraphQLExecutionResult) or result.errors or result.data is None:
        return
    if not recorded.cacheable:
        return
    try:
        body = encode_json(result.data)
    except (TypeError, ValueError):
        return
    cache.put(key, body, recorded.found, started)
