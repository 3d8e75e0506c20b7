"""Access rules applied by the resolvers."""

from __future__ import annotations

from dynamo.errors import ErrorCode, LeaderboardError
from resolvers.context import Context

__all__ = ["require_admin", "require_authenticated"]


def require_authenticated(ctx: Context) -> None:
    """Writes and private reads need a valid API key."""
    if not ctx.authenticated:
        raise LeaderboardError(
            ErrorCode.UNAUTHENTICATED,
            "this needs an API key: send the header Authorization: Bearer <key>",
        )


def require_admin(ctx: Context) -> None:
    """Moderation and player data need an admin key; a game-server key is FORBIDDEN."""
    require_authenticated(ctx)
    if not ctx.admin:
        raise LeaderboardError(
            ErrorCode.FORBIDDEN,
            "this needs an admin key (one of LEADERBOARD_ADMIN_KEYS); a game-server key may "
            "not moderate",
        )
