"""What the edge reports about the operations it answers and the sockets it holds,
to whoever counts them (the app's metrics). By default nothing is recorded."""

from __future__ import annotations

from typing import Literal, Protocol

from graphql import GraphQLError

from gql.enums import ErrorCode

__all__ = [
    "CLIENT_GONE",
    "OK",
    "Recorder",
    "Transport",
    "Unrecorded",
    "first_code",
    "http_outcome",
]

Transport = Literal["http", "ws"]

OK = "ok"
"""The outcome of an operation answered without an error."""


def first_code(errors: list[GraphQLError] | None) -> str:
    """An answer's outcome: ``ok`` without errors, else its first error's code."""
    if not errors:
        return OK
    code = (errors[0].extensions or {}).get("code")
    return code if isinstance(code, str) else ErrorCode.INTERNAL_SERVER_ERROR.value


def http_outcome(status: int) -> str:
    """The outcome of a request refused by HTTP status alone, before any GraphQL error could
    be made (a body that is not a GraphQL request, too large, too slow, a wrong method)."""
    return f"HTTP_{status}"


CLIENT_GONE = http_outcome(499)
"""The outcome of a request whose client closed its connection before it was answered."""


class Recorder(Protocol):
    def operation(
        self, transport: Transport, name: str | None, outcome: str, seconds: float
    ) -> None:
        """One operation ended: its name (None when it has none), its outcome (``ok`` or its
        first error's code) and how long it took."""

    def sockets(self, open_sockets: int, subscriptions: int) -> None:
        """The process now holds this many WebSockets and running subscriptions."""


class Unrecorded:
    """A recorder that keeps nothing."""

    def operation(
        self, transport: Transport, name: str | None, outcome: str, seconds: float
    ) -> None:
        return None

    def sockets(self, open_sockets: int, subscriptions: int) -> None:
        return None
