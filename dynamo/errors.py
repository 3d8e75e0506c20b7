"""The one error type of the service: a machine-readable code, a message in the domain's terms
and, when it is about one of an operation's inputs, which one (its subject)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ErrorCode", "LeaderboardError", "Subject"]


class ErrorCode(StrEnum):
    """Every code a client can see, in a mutation's ``UserError.code`` or an error's
    ``extensions.code``: a closed set that clients can switch on (the schema exposes it as the
    ``ErrorCode`` enum; gql/enums.py describes each value)."""

    INVALID_ID = "INVALID_ID"
    INVALID_EMAIL = "INVALID_EMAIL"
    INVALID_NAME = "INVALID_NAME"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    INVALID_CURSOR = "INVALID_CURSOR"
    INVALID_METADATA = "INVALID_METADATA"
    """A play's metadata that is not a JSON object of at most 1 KiB (as compact UTF-8 JSON),
    nested at most 8 deep, with finite numbers and valid Unicode text."""
    SCORE_OUT_OF_RANGE = "SCORE_OUT_OF_RANGE"
    PLAYER_NOT_FOUND = "PLAYER_NOT_FOUND"
    PLAYER_EXISTS = "PLAYER_EXISTS"
    PLAYER_BANNED = "PLAYER_BANNED"
    """The player is banned: its plays are refused, and nothing is written."""
    PLAYER_NOT_BANNED = "PLAYER_NOT_BANNED"
    """The player to unban is not banned."""
    EMAIL_TAKEN = "EMAIL_TAKEN"
    LEADERBOARD_NOT_FOUND = "LEADERBOARD_NOT_FOUND"
    LEADERBOARD_EXISTS = "LEADERBOARD_EXISTS"
    LEADERBOARD_CLOSED = "LEADERBOARD_CLOSED"
    NO_REWARD = "NO_REWARD"
    """The player has no final result on the board, or one with no reward: nothing to claim."""
    ALREADY_CLAIMED = "ALREADY_CLAIMED"
    """The result's reward was claimed before (the payload holds that first claim)."""
    ENTRY_NOT_FOUND = "ENTRY_NOT_FOUND"
    """The player has no entry on the board (to remove, or that a rank was read for)."""
    SUBMISSION_CONFLICT = "SUBMISSION_CONFLICT"
    SUBMISSION_ID_REUSED = "SUBMISSION_ID_REUSED"
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN"
    """The database did not confirm a write that may have been applied all the same."""
    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    """The key presented does not allow this (moderation needs an admin key)."""
    COST_LIMIT_EXCEEDED = "COST_LIMIT_EXCEEDED"
    """A document whose worst-case cost is over the limit, or a request that reached its cap
    on database calls: make it smaller; sending it again will not help."""
    THROTTLED = "THROTTLED"
    """This client is over its own allowance (cost per second, sockets, subscriptions): retry
    after the time given."""
    SERVICE_OVERLOADED = "SERVICE_OVERLOADED"
    """The process is at its capacity of requests or subscriptions: retry shortly."""
    BAD_USER_INPUT = "BAD_USER_INPUT"
    """A request's variables do not fit their declared types."""
    GRAPHQL_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
    """A request's document does not parse or is not valid against the schema."""
    CHARACTER_LIMIT_EXCEEDED = "CHARACTER_LIMIT_EXCEEDED"
    """A document's text is longer than the limit (``extensions.limit``, in characters)."""
    TOKEN_LIMIT_EXCEEDED = "TOKEN_LIMIT_EXCEEDED"
    """A document has more lexical tokens than the limit."""
    DEPTH_LIMIT_EXCEEDED = "DEPTH_LIMIT_EXCEEDED"
    """An operation nests fields deeper than the limit, counted through fragments."""
    ALIAS_LIMIT_EXCEEDED = "ALIAS_LIMIT_EXCEEDED"
    """A document has more aliased fields than the limit, each expansion of a fragment counted."""
    OPERATION_LIMIT_EXCEEDED = "OPERATION_LIMIT_EXCEEDED"
    """A document has more operations than the limit."""
    FRAGMENT_LIMIT_EXCEEDED = "FRAGMENT_LIMIT_EXCEEDED"
    """A document defines more fragments than the limit."""
    SPREAD_LIMIT_EXCEEDED = "SPREAD_LIMIT_EXCEEDED"
    """A selection set spreads more fragments than the limit."""
    SAME_NAME_LIMIT_EXCEEDED = "SAME_NAME_LIMIT_EXCEEDED"
    """A selection set has more fields of one response name than the limit, those of its
    fragments included."""
    MERGE_LIMIT_EXCEEDED = "MERGE_LIMIT_EXCEEDED"
    """Checking that a document's fields of one response name can be merged takes more work
    than the limit: fields repeated inside repeated fields multiply it."""
    INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"
    """Anything unexpected; the log has the details under the request's id."""


class Subject(StrEnum):
    """The input of an operation that a domain error is about. The API layer, which knows how
    each operation's inputs are named, turns it into the name of the field at fault."""

    PLAYER = "player"
    """The player the operation names, or the id of a new player."""
    EMAIL = "email"
    LEADERBOARD = "leaderboard"
    """A board the operation names, or the id of a new board."""
    FAMILY = "family"
    """A leaderboard family the operation names, or the id of a new family."""
    SCORE = "score"
    SUBMISSION = "submission"
    """The id that makes a play idempotent."""
    CURSOR = "cursor"
    """Where a page starts."""
    REASON = "reason"
    """Why an operator acts, as the moderation log keeps it."""


class LeaderboardError(Exception):
    """A client-visible failure. Raised anywhere below the GraphQL layer, mapped there."""

    def __init__(self, code: ErrorCode, message: str, subject: Subject | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.subject = subject

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value!r}, {self.message!r}, {self.subject!r})"
