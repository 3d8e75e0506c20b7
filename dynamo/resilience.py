"""Failing fast when DynamoDB is down or drowning, and recovering by itself when it is back.

The client already retries throttling, 5xx answers and dropped connections with jittered
exponential backoff (botocore's standard retry mode, bounded attempts and timeouts). A call
that still fails counts against the backend; after ``threshold`` such failures in a row the
circuit opens, and every call fails at once with BACKEND_UNAVAILABLE instead of queueing
behind timeouts. After ``cooldown`` one call is let through as a probe: its success closes
the circuit, its failure keeps it open for another cooldown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    HTTPClientError,
)

from dynamo.errors import ErrorCode, LeaderboardError

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["CircuitBreaker", "is_backend_failure", "outcome_unknown", "unavailable"]

_OVERLOADED = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "InternalFailure",
}
_THROTTLED_REASONS = {"ThrottlingError", "ProvisionedThroughputExceeded"}
"""Cancellation reasons of a transaction that DynamoDB throttled (nothing was written)."""


def unavailable(detail: str = "") -> LeaderboardError:
    message = "the database is unavailable or overloaded; nothing was written, retry later"
    return LeaderboardError(ErrorCode.BACKEND_UNAVAILABLE, f"{message}{detail}")


def outcome_unknown(detail: str = "") -> LeaderboardError:
    """For a write whose request may have reached the database unanswered: it may have been
    recorded, and only a repeat that the database recognises can say so."""
    message = "the database did not confirm this write; it may have been recorded"
    return LeaderboardError(ErrorCode.OUTCOME_UNKNOWN, f"{message}{detail}")


def is_backend_failure(error: BaseException) -> bool:
    """Whether ``error`` says DynamoDB could not serve the call (as opposed to a refusal of
    the call itself, such as a failed condition)."""
    if isinstance(error, LeaderboardError):
        return error.code in (ErrorCode.BACKEND_UNAVAILABLE, ErrorCode.OUTCOME_UNKNOWN)
    if isinstance(error, ClientError):
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        code = error.response["Error"].get("Code")
        if code == "TransactionCanceledException":
            reasons = error.response.get("CancellationReasons", [])
            return any(r.get("Code") in _THROTTLED_REASONS for r in reasons)
        return code in _OVERLOADED or status >= 500
    if isinstance(error, EndpointConnectionError | ConnectionClosedError | HTTPClientError):
        return True
    return isinstance(error, BotoCoreError | TimeoutError)


class CircuitBreaker:
    """``on_change``, when given, is told the new state (``closed``, ``open``, ``half-open``)
    each time it changes."""

    def __init__(
        self,
        *,
        threshold: int = 5,
        cooldown: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._on_change = on_change
        self._failures = 0
        self._open_until: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        if self._open_until is None:
            return "closed"
        return "half-open" if self._probing else "open"

    def attach(self, client: DynamoDBClient) -> None:
        events = client.meta.events
        events.register("before-call.dynamodb", self._before)
        events.register("after-call.dynamodb", self._after)
        events.register("after-call-error.dynamodb", self._error)

    def _before(self, **_: Any) -> None:
        if self._open_until is None:
            return
        if self._probing or self._clock() < self._open_until:
            raise unavailable(" (circuit open)")
        self._probing = True  # this call is the probe
        self._changed()

    def _after(self, http_response: Any, parsed: Any, **_: Any) -> None:
        status = getattr(http_response, "status_code", 200)
        code = parsed.get("Error", {}).get("Code") if isinstance(parsed, dict) else None
        if status >= 500 or code in _OVERLOADED:
            self._failed()
        else:
            self._succeeded()

    def _error(self, exception: BaseException, **_: Any) -> None:
        if is_backend_failure(exception):
            self._failed()

    def _failed(self) -> None:
        before = self.state
        self._failures += 1
        self._probing = False
        if self._failures >= self.threshold or self._open_until is not None:
            self._open_until = self._clock() + self.cooldown
        if self.state != before:
            self._changed()

    def _succeeded(self) -> None:
        self._failures = 0
        if self._open_until is None:
            return
        self._open_until = None
        self._probing = False
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.state)
