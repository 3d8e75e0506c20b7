"""The limits' reference page: each limit's value read from the constant or setting that holds
it, what it bounds from that constant's docstring, and how a request past it is answered.

The answers are declared here, beside the name of the constant they go with; the code raising
each error keeps its own reasons, and tests/test_docs_reference.py checks the declared codes of
the document limits against the ones tests/test_abuse_validation.py sees the service answer."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, fields

from docsgen.markdown import code, escape, heading, page, table
from docsgen.settings import limit_variable
from docsgen.source import attribute_docs
from dynamo.errors import ErrorCode
from leaderboard.config import Limits

__all__ = ["ANSWERS", "DOCUMENT", "INPUT", "Limit", "render_limits"]


@dataclass(frozen=True)
class Limit:
    """A limit held by a module's constant."""

    constant: str
    """Its module and name, ``edge.limits.MAX_TOKENS``."""
    code: ErrorCode | None
    """The code of the error a request past it is answered with; None where it is refused
    otherwise (``answer`` says how)."""
    answer: str = ""
    """How a request past it is answered, beyond its code."""

    @property
    def name(self) -> str:
        return self.constant.rsplit(".", 1)[1]

    def value(self) -> int:
        module, name = self.constant.rsplit(".", 1)
        value = getattr(importlib.import_module(module), name)
        assert isinstance(value, int), self.constant
        return value

    def meaning(self) -> str:
        module, name = self.constant.rsplit(".", 1)
        docs = attribute_docs(importlib.import_module(module))
        if name not in docs:
            raise ValueError(f"{self.constant} has no docstring to say what it bounds")
        return docs[name]


DOCUMENT = (
    Limit("edge.limits.MAX_CHARACTERS", ErrorCode.CHARACTER_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_TOKENS", ErrorCode.TOKEN_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_DEPTH", ErrorCode.DEPTH_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_ALIASES", ErrorCode.ALIAS_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_OPERATIONS", ErrorCode.OPERATION_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_FRAGMENTS", ErrorCode.FRAGMENT_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_SPREADS", ErrorCode.SPREAD_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_SAME_NAME", ErrorCode.SAME_NAME_LIMIT_EXCEEDED),
    Limit("edge.limits.MAX_MERGE_WORK", ErrorCode.MERGE_LIMIT_EXCEEDED),
    Limit("edge.cost_model.MAX_COST", ErrorCode.COST_LIMIT_EXCEEDED),
    Limit(
        "edge.limits.MAX_ERRORS",
        None,
        "the errors past it are left out, and the last one says that validation stopped",
    ),
)
"""The limits of a document, checked before anything runs, each refusing it with
``extensions.limit`` set to its value."""

INPUT = (
    Limit("resolvers.inputs.MAX_PAGE_SIZE", ErrorCode.INVALID_ARGUMENT),
    Limit("resolvers.inputs.MAX_IDS", ErrorCode.INVALID_ARGUMENT),
    Limit("resolvers.ranks.MAX_AROUND", ErrorCode.INVALID_ARGUMENT),
    Limit("dynamo.plays.MAX_TARGETS", ErrorCode.INVALID_ARGUMENT),
    Limit("dynamo.plays.MAX_DURATION_SEC", ErrorCode.INVALID_ARGUMENT),
    Limit("dynamo.metadata.MAX_METADATA_BYTES", ErrorCode.INVALID_METADATA),
    Limit("dynamo.metadata.MAX_METADATA_DEPTH", ErrorCode.INVALID_METADATA),
    Limit("resolvers.inputs.MAX_NAME", ErrorCode.INVALID_NAME),
    Limit("dynamo.emails.MAX_EMAIL", ErrorCode.INVALID_EMAIL),
    Limit("resolvers.moderation.MAX_REASON", ErrorCode.INVALID_ARGUMENT),
    Limit("dynamo.families.MAX_FAMILY_ID", ErrorCode.INVALID_ID),
    Limit("dynamo.families.MAX_SEASON_DAYS", ErrorCode.INVALID_ARGUMENT),
    Limit("dynamo.families.MAX_RETENTION_DAYS", ErrorCode.INVALID_ARGUMENT),
    Limit("dynamo.leaderboards.MAX_SCORE_WIDTH", ErrorCode.INVALID_ARGUMENT),
    Limit("dynamo.leaderboards.MAX_PARTITIONS", ErrorCode.INVALID_ARGUMENT),
    Limit(
        "gql.scalars.MAX_LONG",
        ErrorCode.BAD_USER_INPUT,
        "in a variable; written in the document, GRAPHQL_VALIDATION_FAILED",
    ),
    Limit("dynamo.players.MAX_LIFETIME_SCORE", ErrorCode.SCORE_OUT_OF_RANGE),
    Limit("dynamo.players.MAX_GAMES_PLAYED", ErrorCode.SCORE_OUT_OF_RANGE),
    Limit("dynamo.play_writes.MAX_ATTEMPTS", ErrorCode.SUBMISSION_CONFLICT),
)
"""The limits of arguments and input, checked where the input is cleaned: nothing is written
past them. The error names the input field at fault (``field``)."""

ANSWERS: dict[str, tuple[ErrorCode | None, str]] = {
    "request_deadline": (ErrorCode.BACKEND_UNAVAILABLE, "HTTP 503, Retry-After"),
    "max_dynamodb_calls": (ErrorCode.COST_LIMIT_EXCEEDED, ""),
    "max_dynamodb_in_flight": (None, "further calls wait their turn"),
    "dynamodb_connect_timeout": (None, "the attempt is retried within the deadline"),
    "dynamodb_read_timeout": (None, "the attempt is retried within the deadline"),
    "max_body_bytes": (None, "HTTP 413"),
    "body_timeout": (None, "HTTP 408, and the connection is closed"),
    "head_timeout": (None, "the connection is closed"),
    "max_concurrent_requests": (None, "the operation waits for a place (queue_timeout)"),
    "queue_timeout": (ErrorCode.SERVICE_OVERLOADED, "HTTP 503, Retry-After"),
    "max_cost_in_flight": (None, "the operation waits for room (queue_timeout)"),
    "anonymous_cost_per_second": (ErrorCode.THROTTLED, "HTTP 429, Retry-After"),
    "anonymous_cost_burst": (ErrorCode.THROTTLED, "HTTP 429, Retry-After"),
    "tracked_clients": (None, "the least recently seen address is forgotten"),
    "max_websockets": (ErrorCode.SERVICE_OVERLOADED, "the upgrade is refused, HTTP 503"),
    "max_websockets_per_client": (ErrorCode.THROTTLED, "the upgrade is refused, HTTP 429"),
    "max_subscriptions": (ErrorCode.SERVICE_OVERLOADED, "the subscription gets an error"),
    "max_subscriptions_per_socket": (ErrorCode.THROTTLED, "the operation gets an error"),
    "connection_init_timeout": (None, "the socket is closed with 4408"),
    "max_socket_buffer_bytes": (None, "the socket is closed"),
    "socket_send_timeout": (None, "the socket is closed"),
    "socket_heartbeat": (None, "a socket that does not answer is closed"),
    "trusted_proxy_hops": (None, "not a bound: which address is the client's"),
    "rank_index_timeout": (None, "ranks are counted in the table instead"),
    "shutdown_timeout": (None, "requests still running are cut off"),
}
"""How a request is answered past each limit of :class:`leaderboard.config.Limits`, by its
field: the code of its error, and how else."""


def render_limits() -> str:
    defaults = Limits()
    missing = {f.name for f in fields(Limits)} ^ ANSWERS.keys()
    if missing:
        raise ValueError(f"Limits fields and ANSWERS differ: {sorted(missing)}")
    limit_docs = attribute_docs(Limits)
    header = ("limit", "value", "answer", "what it bounds")
    process_rows = [
        (
            f"[{code(limit_variable(spec.name))}](settings.md#{limit_variable(spec.name).lower()})",
            _number(getattr(defaults, spec.name)),
            _answer(*ANSWERS[spec.name]),
            escape(limit_docs[spec.name]),
        )
        for spec in fields(Limits)
    ]
    body = [
        heading(2, "Documents", "documents"),
        "",
        escape(_docstring_of("DOCUMENT")),
        "",
        *table(header, _rows(DOCUMENT)),
        "",
        heading(2, "Arguments and input", "input"),
        "",
        escape(_docstring_of("INPUT")),
        "",
        *table(header, _rows(INPUT)),
        "",
        heading(2, "Processes and clients", "processes"),
        "",
        "What one caller can make one process spend: each is a setting, "
        "`LEADERBOARD_LIMIT_<NAME>` (see [Settings](settings.md#limits)); the values here are "
        "the defaults.",
        "",
        *table(header, process_rows),
    ]
    return page(
        "Limits",
        [
            "Every bound the service puts on what a request may ask, with its value, the "
            "answer past it (the [error code](errors.md) in `extensions.code`, or in a "
            "mutation's `UserError.code`) and what it bounds. The values and the descriptions "
            "are the code's own; the code's name for each is given for those who read it.",
        ],
        body,
    )


def _rows(limits: tuple[Limit, ...]) -> list[tuple[str, str, str, str]]:
    return [
        (
            f'<span id="{_anchor(limit)}"></span>{code(limit.name)}',
            _number(limit.value()),
            _answer(limit.code, limit.answer),
            escape(limit.meaning()),
        )
        for limit in limits
    ]


def _anchor(limit: Limit) -> str:
    return limit.name.strip("_").lower().replace("_", "-")


def _answer(error: ErrorCode | None, how: str) -> str:
    """The code (linked to its description) and how else, in brackets after it."""
    if error is None:
        return escape(how) if how else "—"
    linked = f"[{code(error.value)}](errors.md#{error.value.lower()})"
    return f"{linked} ({escape(how)})" if how else linked


def _number(value: float) -> str:
    return f"{value:,}"


def _docstring_of(name: str) -> str:
    return attribute_docs(importlib.import_module(__name__))[name]
