"""Resolve function for submitScore."""

from __future__ import annotations

from dynamo import submit
from dynamo.submit import Submission, SubmitResult
from resolvers.context import Context

__all__ = ["submit_score"]


async def submit_score(
    ctx: Context,
    *,
    player_id: str,
    leaderboard_id: str,
    game_id: str,
    score: int,
    duration_sec: int | None,
) -> SubmitResult:
    result = await submit.submit_score(
        ctx.db,
        Submission(
            player_id=player_id,
            leaderboard_id=leaderboard_id,
            game_id=game_id,
            score=score,
            duration_sec=duration_sec,
        ),
    )
    # What the transaction wrote is known exactly: later fields of the payload (the entry, its
    # board, the session) read it from the loaders instead of from the table again.
    loaders = ctx.loaders
    loaders.best_score.clear((player_id, leaderboard_id)).prime(
        (player_id, leaderboard_id), result.entry
    )
    loaders.leaderboard.clear(leaderboard_id).prime(leaderboard_id, result.board)
    loaders.session.prime((player_id, result.session.session_id), result.session)
    return result
