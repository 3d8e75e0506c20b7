"""Resolve function for submitScore."""

from __future__ import annotations

from dataclasses import dataclass

from dynamo import submit
from dynamo.errors import LeaderboardError
from dynamo.plays import Submission, SubmitResult
from resolvers.context import Context

__all__ = ["SubmitArguments", "submit_score"]


@dataclass(frozen=True)
class SubmitArguments:
    player_id: str
    game_id: str
    score: int
    leaderboard_id: str | None = None
    leaderboard_ids: tuple[str, ...] = ()
    family_ids: tuple[str, ...] = ()
    duration_sec: int | None = None
    submission_id: str | None = None


async def submit_score(ctx: Context, args: SubmitArguments) -> SubmitResult:
    boards = ([args.leaderboard_id] if args.leaderboard_id is not None else []) + list(
        args.leaderboard_ids
    )
    submission = Submission(
        player_id=args.player_id,
        game_id=args.game_id,
        score=args.score,
        leaderboard_ids=tuple(dict.fromkeys(boards)),
        family_ids=tuple(dict.fromkeys(args.family_ids)),
        duration_sec=args.duration_sec,
        submission_id=args.submission_id,
    )
    try:
        result = await submit.submit_score(ctx.db, submission, clock=ctx.clock)
    except LeaderboardError as error:
        if error.field == "leaderboardIds" and not args.leaderboard_ids:
            error.field = "leaderboardId"  # the only board the client named
        raise
    # What the transaction wrote is known exactly: later fields of the payload (each entry, its
    # board, the session) read it from the loaders instead of from the table again.
    loaders = ctx.loaders
    for board in result.boards:
        key = (submission.player_id, board.leaderboard_id)
        loaders.entry.clear(key).prime(key, board.entry)
        loaders.rank.know(board.entry)
        if board.board is not None:
            loaders.leaderboard.clear(board.leaderboard_id).prime(board.leaderboard_id, board.board)
    loaders.session.prime((submission.player_id, result.session.session_id), result.session)
    for board in result.boards:
        if board.improved and not result.duplicate:
            ctx.broker.publish(board.leaderboard_id)
    return result
