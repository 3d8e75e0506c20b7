"""What GraphQL over HTTP asks of a request beyond what Strawberry's parser checks: its
parameters' types and text, the one operation it runs (a subscription, an ambiguous or unknown
operation name, a mutation over GET are refused with their status), and the media type its
answer takes."""

from __future__ import annotations

import json

from cross_web import HTTPException
from graphql import OperationDefinitionNode
from strawberry.http import GraphQLRequestData
from strawberry.types.graphql import OperationType

from edge.schema import DOCUMENTS, GRAPHQL_SCHEMA
from edge.text import is_text

__all__ = [
    "GRAPHQL_RESPONSE",
    "JSON",
    "MethodNotAllowed",
    "check_operation",
    "check_request",
    "wants_graphql_response",
]

JSON = "application/json"
GRAPHQL_RESPONSE = "application/graphql-response+json"


class MethodNotAllowed(HTTPException):
    """A mutation sent over GET: 405, and only POST is allowed for it."""

    def __init__(self) -> None:
        super().__init__(405, "mutations are accepted over POST only, not GET")


def check_request(data: GraphQLRequestData) -> None:
    """The parameters' types and text, beyond what the GraphQL over HTTP parser checks."""
    if not isinstance(data.operation_name, str | None):
        raise HTTPException(400, "the operationName must be a string or null, if provided")
    if not is_text([data.query, data.operation_name, data.variables, data.extensions]):
        raise HTTPException(400, "the request has text that is not valid Unicode")


def _operation_type(query: str | None, operation_name: str | None) -> OperationType | None:
    """The type of the operation the request asks to run. A document with several operations
    and no operationName, or an operationName naming none of them, is a request error (400),
    as the GraphQL over HTTP specification has it. None when there is nothing to choose from
    (no query, a document that does not parse or has no operation): the execution reports it."""
    if not query:
        return None
    document = DOCUMENTS.check(GRAPHQL_SCHEMA, query).document
    if document is None:
        return None
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is None:
        if len(operations) > 1:
            raise HTTPException(
                400,
                "the document has several operations: name the one to run in operationName",
            )
        chosen = operations[0] if operations else None
    else:
        chosen = next(
            (op for op in operations if op.name and op.name.value == operation_name), None
        )
        if chosen is None:
            raise HTTPException(
                400, f"the document has no operation named {json.dumps(operation_name)}"
            )
    return OperationType(chosen.operation.value) if chosen else None


def _quality(params: list[str]) -> float:
    """The q of a media range: 1 when absent, 0 when not a number."""
    for param in params:
        if param.startswith("q="):
            try:
                return float(param[2:])
            except ValueError:
                return 0.0
    return 1.0


def wants_graphql_response(accept: str) -> bool:
    """Whether the client prefers application/graphql-response+json (the GraphQL over HTTP
    media type) to application/json; without an Accept header, it does not."""
    weights: dict[str, float] = {}
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        weights[media.lower()] = _quality(params)
    ours = weights.get(GRAPHQL_RESPONSE, 0.0)
    return ours > 0 and ours >= max(weights.get(JSON, 0.0), weights.get("*/*", 0.0))


def check_operation(data: GraphQLRequestData, method: str) -> None:
    """Refuse an operation plain HTTP does not run: a subscription with a 400 naming where it
    is served (plain HTTP has no way to deliver its events), a mutation over GET with a 405
    that allows POST, and a choice of operation the document does not settle with a 400
    (see :func:`_operation_type`)."""
    kind = _operation_type(data.query, data.operation_name)
    if kind is OperationType.SUBSCRIPTION:
        raise HTTPException(
            400,
            "subscriptions are served over WebSocket (graphql-transport-ws) at this "
            "URL, not over a plain HTTP request",
        )
    if kind is OperationType.MUTATION and method == "GET":
        raise MethodNotAllowed
