"""Access rules applied by the resolvers."""

from __future__ import annotations

from dynamo.errors import ErrorCode, LeaderboardError
from resolvers.context import Context

__all__ = ["require_authenticated"]


def require_authenticated(ctx: Context) -> None:
    """Writes and private reads need a valid API key."""
    if not ctx.authenticated:
        raise LeaderboardError(
            ErrorCode.UNAUTHENTICATED,
            "this needs an API key: send the header Authorization: Bearer <key>",
        )
