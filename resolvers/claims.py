"""Resolve functions for rewards: a result's claim, claiming it, and the results feed."""

from __future__ import annotations

from dynamo import claims, leaderboards, result_feed
from dynamo.claims import ClaimItem, ClaimOutcome
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import stamp
from dynamo.reads import Page
from dynamo.results import ResultItem
from resolvers.auth import require_authenticated
from resolvers.context import Context
from resolvers.final import is_final
from resolvers.inputs import PAGE, FieldError, clean_id, naming, page_size

__all__ = ["already_claimed", "claim_reward", "resolve_claim", "resolve_result_feed"]


async def resolve_claim(ctx: Context, result: ResultItem) -> ClaimItem | None:
    """The claim of the result's reward; None while unclaimed."""
    ctx.uncacheable()  # no dependency names a claim
    return await ctx.loaders.claim.load((result.player_id, result.leaderboard_id))


async def claim_reward(ctx: Context, leaderboard_id: str, player_id: str) -> ClaimOutcome:
    """Claim the reward of the player's final result on the board (a game-server or admin
    key), as the key's fingerprint: the board read consistently (one Query), then the claim's
    transaction. NO_REWARD at ``playerId``, nothing written, for a board that is not FINAL
    (it has no result yet), a player with no result there, or a result in no tier;
    LEADERBOARD_NOT_FOUND at ``leaderboardId`` for no board. A result claimed before gives
    the first claim (``first`` False)."""
    require_authenticated(ctx)
    ctx.uncacheable()
    board_id = clean_id(leaderboard_id, "leaderboardId")
    player = clean_id(player_id, "playerId")
    board = await leaderboards.read_board(ctx.db, board_id, consistent=True, count=False)
    if board is None:
        raise FieldError(
            ErrorCode.LEADERBOARD_NOT_FOUND, f"no leaderboard {board_id!r}", "leaderboardId"
        )
    if not is_final(board):
        raise FieldError(
            ErrorCode.NO_REWARD,
            f"leaderboard {board_id!r} is {board.status(ctx.clock()).value}, not FINAL: it has "
            "no final result yet, nothing to claim",
            "playerId",
        )
    with naming({Subject.PLAYER: "playerId", Subject.LEADERBOARD: "leaderboardId"}):
        return await claims.claim_reward(
            ctx.db,
            player_id=player,
            leaderboard_id=board_id,
            actor=ctx.caller.actor or "",
            at=ctx.clock(),
        )


def already_claimed(claim: ClaimItem) -> LeaderboardError:
    """The error of a claim of a result claimed before: it names the first claim's time."""
    return LeaderboardError(
        ErrorCode.ALREADY_CLAIMED,
        f"the reward of player {claim.player_id!r}'s result on {claim.leaderboard_id!r} was "
        f"claimed at {stamp(claim.claimed_at)}: nothing was written (claim is that first "
        "claim)",
    )


async def resolve_result_feed(
    ctx: Context, first: int | None, after: str | None
) -> Page[ResultItem]:
    """A page of the results feed (a game-server or admin key): every final result, board
    after board in the order they closed, from ``after`` on."""
    require_authenticated(ctx)
    ctx.uncacheable()  # no dependency names the feed
    size = page_size(first)
    with naming(PAGE):
        page = await result_feed.result_feed(ctx.db, size, after, at=ctx.clock())
    for result in page.items:
        ctx.loaders.result.prime((result.player_id, result.leaderboard_id), result)
    return Page(page.items, page.cursors, page.has_next)
