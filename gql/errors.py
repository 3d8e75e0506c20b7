"""How failures reach clients: typed codes on every error, internal details never."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import strawberry
from graphql import ExecutionResult as GraphQLResult
from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.types.execution import ExecutionResult

from dynamo.errors import LeaderboardError
from dynamo.resilience import is_backend_failure, unavailable
from gql.enums import ErrorCode
from resolvers.context import Context
from resolvers.inputs import FieldError

__all__ = [
    "ErrorCodes",
    "UserError",
    "classify",
    "coded",
    "log_unexpected",
    "user_errors",
]

log = logging.getLogger("leaderboard.graphql")

INTERNAL = ErrorCode.INTERNAL_SERVER_ERROR.value
BAD_USER_INPUT = ErrorCode.BAD_USER_INPUT.value
VALIDATION_FAILED = ErrorCode.GRAPHQL_VALIDATION_FAILED.value


@strawberry.type(description="A problem with the input of a mutation; nothing was written.")
class UserError:
    code: ErrorCode = strawberry.field(
        description="Why nothing was written, e.g. PLAYER_NOT_FOUND or SCORE_OUT_OF_RANGE."
    )
    message: str = strawberry.field(description="A human-readable explanation.")
    field: str | None = strawberry.field(
        description="The input field at fault (its GraphQL name), when there is one."
    )


def user_errors(error: LeaderboardError) -> list[UserError]:
    return [UserError(code=error.code, message=error.message, field=_field(error))]


def classify(errors: list[GraphQLError], request_id: str) -> list[GraphQLError]:
    """Every error with an ``extensions.code`` (errors that have one are kept as they are)."""
    return [e if (e.extensions or {}).get("code") else _classify(e, request_id) for e in errors]


def coded(error: LeaderboardError, source: GraphQLError | None = None) -> GraphQLError:
    """The GraphQL error for a domain error: its message, code and field."""
    extensions: dict[str, object] = {"code": error.code.value}
    field = _field(error)
    if field:
        extensions["field"] = field
    return GraphQLError(
        error.message,
        source.nodes if source else None,
        path=source.path if source else None,
        extensions=extensions,
    )


def _field(error: LeaderboardError) -> str | None:
    """The field at fault: known only for input refused where the arguments are cleaned."""
    return error.field if isinstance(error, FieldError) else None


def _classify(error: GraphQLError, request_id: str) -> GraphQLError:
    original = error.original_error
    if isinstance(original, LeaderboardError):
        return coded(original, error)
    if error.path is None:
        # Parsing, validation and variable coercion: the client sent a bad request.
        code = BAD_USER_INPUT if error.message.startswith("Variable ") else VALIDATION_FAILED
        return GraphQLError(
            error.message,
            error.nodes,
            path=None,
            extensions={**(error.extensions or {}), "code": code},
        )
    if original is None:
        return GraphQLError(
            error.message, error.nodes, path=error.path, extensions={"code": BAD_USER_INPUT}
        )
    if is_backend_failure(original):
        return coded(unavailable(), error)
    return GraphQLError(
        f"Internal server error (request {request_id})",
        error.nodes,
        path=error.path,
        extensions={"code": INTERNAL, "requestId": request_id},
    )


class ErrorCodes(SchemaExtension):
    """Gives every error an ``extensions.code``; unexpected exceptions become a generic
    INTERNAL_SERVER_ERROR (their traceback goes to the log, not to the client). A request
    refused while parsing skips this hook; the HTTP view classifies its errors."""

    def on_operation(self) -> Iterator[None]:
        yield
        context = self.execution_context.context
        request_id = ""
        if isinstance(context, Context):
            context.operation_name = self.execution_context.operation_name
            request_id = context.request_id
        result = self.execution_context.result
        if isinstance(result, ExecutionResult | GraphQLResult) and result.errors:
            result.errors = classify(result.errors, request_id)


def log_unexpected(errors: list[GraphQLError], request_id: str) -> None:
    """Log, with its traceback, every error raised by the service's own code while executing."""
    for error in errors:
        original = error.original_error
        if original is not None and is_backend_failure(original):
            log.warning(
                "database unavailable: %s",
                type(original).__name__,
                extra={"requestId": request_id},
            )
        elif error.path is not None and not isinstance(original, LeaderboardError | None):
            log.error(
                "unexpected error",
                exc_info=original,
                extra={"requestId": request_id, "path": ".".join(map(str, error.path))},
            )
