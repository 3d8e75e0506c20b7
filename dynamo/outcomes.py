"""Whether a write that failed may have been applied all the same.

botocore retries a failed attempt of a call with the same parameters. For TransactWriteItems
these include the ClientRequestToken, and DynamoDB answers a repeat of a token it has already
applied with success (for 10 minutes), so an attempt that DynamoDB answers settles what the
earlier attempts of the same call did. A call that fails for good is a clean refusal unless
one of its attempts may have reached DynamoDB and got no answer from it: a dropped
connection, a read timeout, a 5xx answer, TransactionInProgressException, or the caller
giving up while an attempt was on its way. A throttling answer refuses its own attempt only;
a connection that could not be opened sent nothing.

:func:`watching` follows the attempts of the calls made inside it (the client must have been
passed to :func:`attach`); :func:`recording` collects the watched writes of a whole request,
so that a request cut off by its deadline can tell whether a write was left unconfirmed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from aiohttp import ClientConnectorError
from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError

from dynamo.errors import LeaderboardError
from dynamo.resilience import outcome_unknown, unavailable
from dynamo.transport import NotConnected

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = ["Write", "attach", "out_of_time", "recording", "watching"]

_REFUSED = {
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
}
"""Answers that refuse the attempt before DynamoDB looks at its token."""
_IN_PROGRESS = "TransactionInProgressException"


class Write:
    """What the attempts of one write call tell about its effect."""

    def __init__(self, label: str) -> None:
        self.label = label
        """What the write records (for messages), e.g. a session id."""
        self.attempts = 0
        self.in_flight = False
        """An attempt was sent and nothing came back yet."""
        self.unsettled = False
        """An attempt may have been applied, and no later answer from DynamoDB said whether."""

    @property
    def outcome_unknown(self) -> bool:
        return self.in_flight or self.unsettled


_write: ContextVar[Write | None] = ContextVar("dynamodb_write", default=None)
_request: ContextVar[list[Write] | None] = ContextVar("dynamodb_request_writes", default=None)


@contextmanager
def watching(label: str) -> Iterator[Write]:
    """Follow the attempts of the (one) write call made inside the block."""
    write = Write(label)
    writes = _request.get()
    if writes is not None:
        writes.append(write)
    token = _write.set(write)
    try:
        yield write
    finally:
        _write.reset(token)


@contextmanager
def recording() -> Iterator[list[Write]]:
    """Collect the writes watched inside the block, in the tasks it starts too."""
    writes: list[Write] = []
    token = _request.set(writes)
    try:
        yield writes
    finally:
        _request.reset(token)


def out_of_time(writes: list[Write]) -> LeaderboardError:
    """The error of a request cut off by its deadline: OUTCOME_UNKNOWN naming the writes it
    left unconfirmed, or BACKEND_UNAVAILABLE when it left none."""
    unconfirmed = [w.label for w in writes if w.outcome_unknown]
    if unconfirmed:
        return outcome_unknown(
            f" (the request ran out of time; unconfirmed: {', '.join(unconfirmed)})"
        )
    return unavailable(" (the request ran out of time)")


def attach(client: DynamoDBClient) -> None:
    events = client.meta.events
    events.register("before-send.dynamodb", _sending)
    events.register("needs-retry.dynamodb", _answered)


def _sending(**_: Any) -> None:
    write = _write.get()
    if write is not None:
        write.attempts += 1
        write.in_flight = True


def _answered(
    response: Any = None, caught_exception: BaseException | None = None, **_: Any
) -> None:
    """Called after every attempt, before botocore decides whether to retry (returns None,
    so it never asks for a retry itself)."""
    write = _write.get()
    if write is None:
        return
    write.in_flight = False
    verdict = _may_be_applied(response, caught_exception)
    if verdict is not None:
        write.unsettled = verdict


def _may_be_applied(response: Any, error: BaseException | None) -> bool | None:
    """True: this attempt may have been applied unseen; False: DynamoDB answered for the
    token, which settles every attempt so far; None: this attempt was refused unseen."""
    if error is not None:
        return None if _never_sent(error) else True
    http_response, parsed = response
    if http_response.status_code >= 500:
        return True
    code = parsed.get("Error", {}).get("Code") if isinstance(parsed, dict) else None
    if code == _IN_PROGRESS:
        return True
    if code in _REFUSED:
        return None
    return False


def _never_sent(error: BaseException) -> bool:
    if isinstance(error, ConnectTimeoutError | NotConnected):
        return True  # the direct calls' transport had no connection to send the request on
    # aiobotocore reports a connection reset mid-request as EndpointConnectionError too; only
    # a connection that was never established is sure to have carried nothing.
    return isinstance(error, EndpointConnectionError) and isinstance(
        getattr(error, "kwargs", {}).get("error"), ClientConnectorError
    )
