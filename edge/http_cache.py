"""HTTP caching by shared caches (a CDN in front of the service) of anonymous GET queries.

Only a successful answer to a GET query without an Authorization header, whose document
names no private field, is public: it carries ``Cache-Control: public`` with a short
``max-age`` and ``stale-while-revalidate``, a strong ``ETag`` of its exact bytes, and is
answered 304 when the request's ``If-None-Match`` matches that tag. Every other answer of
the GraphQL endpoint says ``private, no-store`` (``no-store`` when it is an error), so that
no shared cache keeps what one caller may see, or a failure.

The operation runs in full either way: the tag is of the answer, so it is known only once
the answer is. A public answer carries nothing that differs from one caller or request to
the next: its ``extensions.cost`` keeps the document's cost, not the calls this request made
nor the client's allowance.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from aiohttp import web
from graphql import BREAK, DocumentNode, FieldNode, TypeInfo, TypeInfoVisitor, Visitor, visit
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.types import ExecutionResult

from edge.schema import DOCUMENTS, GRAPHQL_SCHEMA

__all__ = [
    "ERROR",
    "PRIVATE",
    "PRIVATE_FIELDS",
    "VARY",
    "CachePolicy",
    "consider",
    "entity_tag",
    "finish",
    "matches",
    "names_private_field",
    "refusal_headers",
    "settle",
]

PRIVATE = "private, no-store"
"""The Cache-Control of a successful answer no shared cache may keep."""
ERROR = "no-store"
"""The Cache-Control of an error answer: no cache keeps it."""
VARY = "Accept, Authorization"
"""What an answer of the GraphQL endpoint depends on besides its URL: the Accept header
picks the media type (application/json or application/graphql-response+json) and, without a
query, the GraphiQL page; the Authorization header picks the caller."""

PRIVATE_FIELDS = frozenset(
    {
        ("Query", "playerByEmail"),
        ("Query", "moderationLog"),
        ("Query", "resultFeed"),
        ("Player", "email"),
        ("Player", "moderation"),
    }
)
"""The fields (type, field) whose value depends on the caller's key. An answer naming one is
never public, even when the caller has no key (and reads null or an error)."""


@dataclass(frozen=True)
class CachePolicy:
    """How long shared caches may keep a public answer."""

    max_age: int = 1
    """Seconds a public answer is fresh."""
    stale_while_revalidate: int = 10
    """Seconds past that a cache may still serve it while it fetches a fresh one."""

    def __post_init__(self) -> None:
        if self.max_age < 0 or self.stale_while_revalidate < 0:
            raise ValueError("cache lifetimes are whole seconds, 0 or more")

    @property
    def public(self) -> str:
        """The Cache-Control of a public answer."""
        return (
            f"public, max-age={self.max_age}, stale-while-revalidate={self.stale_while_revalidate}"
        )


class _Outcome(Enum):
    PUBLIC = "public"
    FAILED = "failed"


_MAY_BE_PUBLIC = web.RequestKey("http_cache_may_be_public", bool)
_OUTCOME = web.RequestKey("http_cache_outcome", _Outcome)


class _PrivateFieldFinder(Visitor):
    def __init__(self, type_info: TypeInfo) -> None:
        super().__init__()
        self.type_info = type_info
        self.found = False

    def enter_field(self, node: FieldNode, *_: Any) -> Any:
        parent = self.type_info.get_parent_type()
        if parent is not None and (parent.name, node.name.value) in PRIVATE_FIELDS:
            self.found = True
            return BREAK
        return None


def names_private_field(document: DocumentNode) -> bool:
    """Whether any operation or fragment of the document selects a private field."""
    type_info = TypeInfo(GRAPHQL_SCHEMA)
    finder = _PrivateFieldFinder(type_info)
    visit(document, TypeInfoVisitor(type_info, finder))
    return finder.found


def _may_be_public(request: web.Request, data: object) -> bool:
    if request.method != "GET" or "Authorization" in request.headers:
        return False
    if not isinstance(data, GraphQLRequestData) or not data.query:
        return False
    document = DOCUMENTS.check(GRAPHQL_SCHEMA, data.query).document
    return document is not None and not names_private_field(document)


def consider(request: web.Request, data: object) -> None:
    """Before the operation runs: note whether its answer may be public (an anonymous GET of
    one document that names no private field)."""
    request[_MAY_BE_PUBLIC] = _may_be_public(request, data)


def settle(request: web.Request, result: ExecutionResult, body: GraphQLHTTPResponse) -> None:
    """Once a result is known: an error makes the answer an error answer; a success that may
    be public becomes public, and loses what is particular to this request."""
    if result.errors:
        request[_OUTCOME] = _Outcome.FAILED
    elif _OUTCOME not in request and request.get(_MAY_BE_PUBLIC, False):
        request[_OUTCOME] = _Outcome.PUBLIC
        _drop_per_request_extensions(body)


_PER_REQUEST_COST = ("dynamodbCalls", "throttleStatus")


def _drop_per_request_extensions(body: GraphQLHTTPResponse) -> None:
    extensions = body.get("extensions")
    cost = extensions.get("cost") if isinstance(extensions, dict) else None
    if isinstance(cost, dict):
        for name in _PER_REQUEST_COST:
            cost.pop(name, None)


def entity_tag(media_type: str, body: bytes) -> str:
    """A strong entity tag of the answer's bytes and media type (the same bytes sent as
    application/json and as application/graphql-response+json are two representations):
    128 bits of BLAKE2b, URL-safe base64, quoted."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(media_type.encode())
    digest.update(b"\n")
    digest.update(body)
    return '"' + base64.urlsafe_b64encode(digest.digest()).decode().rstrip("=") + '"'


def _entity_tags(value: str) -> Iterator[str]:
    """The entity tags of one If-None-Match list (weak ones without their ``W/``), up to its
    first fault, in one pass: empty elements and spaces around commas are skipped, and a tag
    may hold a comma."""
    position, end = 0, len(value)
    while True:
        while position < end and value[position] in " \t,":
            position += 1
        if position == end:
            return
        if value.startswith("W/", position):
            position += 2
        close = value.find('"', position + 1) if value.startswith('"', position) else -1
        if close < 0:
            return
        yield value[position : close + 1]
        position = close + 1
        while position < end and value[position] in " \t":
            position += 1
        if position < end and value[position] != ",":
            return


def matches(if_none_match: Iterable[str], tag: str) -> bool:
    """Whether the If-None-Match header lines match ``tag`` by RFC 9110's weak comparison
    (``W/"x"`` matches ``"x"``): ``*``, or a list of entity tags naming it. A malformed
    list matches by the tags read before the fault."""
    for value in if_none_match:
        if value.strip(" \t") == "*":
            return True
        if tag in _entity_tags(value):
            return True
    return False


def refusal_headers() -> dict[str, str]:
    """The caching headers of a request refused before any operation ran."""
    return {"Cache-Control": ERROR, "Vary": VARY}


def finish(
    request: web.Request, response: web.StreamResponse, policy: CachePolicy
) -> web.StreamResponse:
    """The answer with its caching headers: a public answer gets its entity tag, or becomes
    a 304 without a body when If-None-Match matches it."""
    if response.prepared:  # streamed: its headers are gone
        return response
    outcome = request.get(_OUTCOME)
    if response.status >= 400 or outcome is _Outcome.FAILED:
        response.headers.update(refusal_headers())
        return response
    if (
        outcome is _Outcome.PUBLIC
        and response.status == 200
        and isinstance(response, web.Response)
        and isinstance(response.body, bytes)
    ):
        tag = entity_tag(response.content_type, response.body)
        headers = {"Cache-Control": policy.public, "ETag": tag, "Vary": VARY}
        if matches(request.headers.getall("If-None-Match", []), tag):
            return web.Response(status=304, headers=headers)
        response.headers.update(headers)
        return response
    response.headers.update({"Cache-Control": PRIVATE, "Vary": VARY})
    return response
