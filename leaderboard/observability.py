"""Request ids, structured JSON logs, and one access-log line per request."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from dynamo import budget
from dynamo.errors import ErrorCode
from edge.app_keys import OPERATION, REQUEST_ID

__all__ = [
    "CLIENT_CLOSED_REQUEST",
    "JsonFormatter",
    "configure_logging",
    "quiet_malformed_requests",
    "request_context",
]


access_log = logging.getLogger("leaderboard.access")
error_log = logging.getLogger("leaderboard.errors")
_INCOMING_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, the record's extra fields, and
    the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(log_format: str = "json", level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if log_format == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("botocore").setLevel(logging.WARNING)
    logging.getLogger("aiobotocore").setLevel(logging.WARNING)
    # The access log below replaces aiohttp's own.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    quiet_malformed_requests()


class _MalformedRequest(logging.Filter):
    """Turns aiohttp's report of a request it could not parse (logged with a traceback at
    ERROR) into one warning line that says what was wrong: on the open internet such requests
    are routine, and aiohttp has already answered them 400."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            remote = record.args[0] if isinstance(record.args, tuple) and record.args else ""
            record.msg = "malformed request from %s: %s"
            record.args = (remote, " ".join(str(error.message).split())[:200])
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


_MALFORMED = _MalformedRequest()


def quiet_malformed_requests() -> None:
    """Log requests aiohttp cannot parse as one line each, without a traceback."""
    logger = logging.getLogger("aiohttp.server")
    if _MALFORMED not in logger.filters:
        logger.addFilter(_MALFORMED)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

CLIENT_CLOSED_REQUEST = 499
"""The status logged for a request whose client went away before it was answered."""


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _internal_error(request_id: str) -> web.Response:
    """The generic answer to an unexpected failure: it names only the request's id."""
    return web.json_response(
        {
            "errors": [
                {
                    "message": f"Internal server error (request {request_id})",
                    "extensions": {
                        "code": ErrorCode.INTERNAL_SERVER_ERROR.value,
                        "requestId": request_id,
                    },
                }
            ]
        },
        status=500,
    )


@web.middleware
async def request_context(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Give the request an id (the client's X-Request-Id if it is a sane one), count its
    DynamoDB calls, answer unexpected failures with a generic error that names the id, and
    log one line when it is done."""
    incoming = request.headers.get("X-Request-Id", "")
    request_id = incoming if _INCOMING_ID.fullmatch(incoming) else uuid.uuid4().hex
    request[REQUEST_ID] = request_id
    spending = budget.begin()
    calls = spending.calls
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
    except web.HTTPException as error:
        status = error.status
        error.headers["X-Request-Id"] = request_id
        raise
    except asyncio.CancelledError:
        # aiohttp cancels the handler of a request whose client went away (or that is still
        # running when a drain's bound is reached): logged as 499 when the client is gone.
        if _client_gone(request):
            status = CLIENT_CLOSED_REQUEST
        raise
    except Exception as error:
        if isinstance(error, ConnectionResetError) and _client_gone(request):
            # The client closed the connection before its request was read: nothing can be
            # answered, and it is no failure of the service (the log line says 499).
            status = CLIENT_CLOSED_REQUEST
            response = web.Response(status=status)
        else:
            error_log.exception("unhandled error", extra={"requestId": request_id})
            response = _internal_error(request_id)
    finally:
        access_log.info(
            "request",
            extra={
                "requestId": request_id,
                "method": request.method,
                "path": request.path,
                "status": status,
                "operationName": request.get(OPERATION),
                "durationMs": round((time.perf_counter() - started) * 1000, 2),
                "dynamodbCalls": sum(calls.values()),
                "dynamodbCallsByOperation": dict(calls),
                "rankIndexFallbacks": spending.rank_index_fallbacks,
            },
        )
    response.headers["X-Request-Id"] = request_id
    return response
