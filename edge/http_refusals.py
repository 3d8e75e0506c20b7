"""HTTP answers refusing a caller or an operation at a limit, each telling the client when to
come back (``Retry-After``): 429 for a client over its own allowance, 503 for a process without
room or out of time."""

from __future__ import annotations

from aiohttp import web
from strawberry.types import ExecutionResult

from dynamo.errors import ErrorCode, LeaderboardError
from edge.admission import RETRY_AFTER_SECONDS
from gql.errors import coded

__all__ = ["refused_status", "socket_refused", "unavailable"]


def unavailable(sub_response: web.Response, error: LeaderboardError) -> ExecutionResult:
    """A 503 answer that tells the client when to come back."""
    sub_response.set_status(503)
    sub_response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return ExecutionResult(data=None, errors=[coded(error)])


def socket_refused(error: LeaderboardError) -> web.Response:
    """A WebSocket upgrade refused at a limit: 429 for the client's own, 503 for the
    process's, with the error as a GraphQL response body."""
    status = 429 if error.code is ErrorCode.THROTTLED else 503
    return web.json_response(
        {"errors": [coded(error).formatted]},
        status=status,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def refused_status(result: ExecutionResult) -> tuple[int, int] | None:
    """The HTTP status and the seconds to wait, when the result refuses a caller over its
    allowance or an operation the process had no room for."""
    for error in result.errors or ():
        extensions = error.extensions or {}
        code = extensions.get("code")
        if code == ErrorCode.THROTTLED.value:
            return 429, int(extensions.get("retryAfter", 1))
        if code == ErrorCode.SERVICE_OVERLOADED.value:
            return 503, RETRY_AFTER_SECONDS
    return None
