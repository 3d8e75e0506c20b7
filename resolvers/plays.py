"""Resolve function for submitScore: the play's input cleaned, then recorded."""

from __future__ import annotations

from dataclasses import dataclass

from dynamo import play_writes
from dynamo.errors import ErrorCode, Subject
from dynamo.plays import MAX_DURATION_SEC, MAX_TARGETS, BoardResult, Play, PlayResult
from dynamo.scores import rank_value
from rankindex.notices import Notice, NoticeKind
from resolvers.changes import writing
from resolvers.context import Context
from resolvers.inputs import FieldError, clean_id, clean_metadata, clean_submission_id, naming

__all__ = ["PlayArguments", "clean_play", "submit_score"]


@dataclass(frozen=True)
class PlayArguments:
    player_id: str
    game_id: str
    score: int
    leaderboard_id: str | None = None
    leaderboard_ids: tuple[str, ...] = ()
    family_ids: tuple[str, ...] = ()
    duration_sec: int | None = None
    submission_id: str | None = None
    metadata: object | None = None
    """The client's metadata as sent, not yet checked."""


def clean_play(args: PlayArguments) -> Play:
    """The play the arguments describe, every id and number checked, at the field named."""
    clean_id(args.player_id, "playerId")
    clean_id(args.game_id, "gameId")
    if args.leaderboard_id is not None:
        clean_id(args.leaderboard_id, "leaderboardId")
    for board_id in args.leaderboard_ids:
        clean_id(board_id, "leaderboardIds")
    for family_id in args.family_ids:
        clean_id(family_id, "familyIds")
    boards = ([args.leaderboard_id] if args.leaderboard_id is not None else []) + list(
        args.leaderboard_ids
    )
    if not boards and not args.family_ids:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT, "name at least one leaderboard or family", "leaderboardId"
        )
    if len(set(boards)) + len(set(args.family_ids)) > MAX_TARGETS:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"a play enters at most {MAX_TARGETS} boards",
            _boards_field(args),
        )
    if args.score < 0:
        raise FieldError(ErrorCode.SCORE_OUT_OF_RANGE, "score must not be negative", "score")
    if args.duration_sec is not None and not 0 <= args.duration_sec <= MAX_DURATION_SEC:
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"durationSec must be between 0 and {MAX_DURATION_SEC}",
            "durationSec",
        )
    return Play(
        player_id=args.player_id,
        game_id=args.game_id,
        score=args.score,
        leaderboard_ids=tuple(dict.fromkeys(boards)),
        family_ids=tuple(dict.fromkeys(args.family_ids)),
        duration_sec=args.duration_sec,
        submission_id=(
            clean_submission_id(args.submission_id) if args.submission_id is not None else None
        ),
        metadata=clean_metadata(args.metadata) if args.metadata is not None else None,
    )


def _boards_field(args: PlayArguments) -> str:
    """The field that names the play's boards: ``leaderboardIds``, unless the client named
    its one board with ``leaderboardId``."""
    return "leaderboardIds" if args.leaderboard_ids else "leaderboardId"


async def submit_score(ctx: Context, args: PlayArguments) -> PlayResult:
    play = clean_play(args)
    fields = {
        Subject.PLAYER: "playerId",
        Subject.LEADERBOARD: _boards_field(args),
        Subject.FAMILY: "familyIds",
        Subject.SCORE: "score",
        Subject.SUBMISSION: "submissionId",
    }
    with writing(ctx.responses, ctx.broker, atomic=True) as written, naming(fields):
        result = await play_writes.record_play(ctx.db, play, clock=ctx.clock)
        changes = {
            board.leaderboard_id: _change(board, play.player_id)
            for board in result.boards
            if board.improved
        }
        for board_id, change in changes.items():
            if change is None:
                written.boards.append(board_id)
            else:
                written.changes.append(change)
    # What the transaction wrote is known exactly: later fields of the payload (each entry, its
    # board, the session) read it from the loaders instead of from the table again.
    loaders = ctx.loaders
    for board in result.boards:
        key = (play.player_id, board.leaderboard_id)
        loaders.entry.clear(key).prime(key, board.entry)
        loaders.rank.know(board.entry)
        if board.board is not None:
            loaders.board_written(board.board)
    loaders.session.prime((play.player_id, result.session.session_id), result.session)
    if not result.duplicate:
        for board_id, change in changes.items():
            if change is not None and change.version is not None and change.after is not None:
                # Its copy from the change feed then wakes nobody a second time.
                ctx.broker.writes.played(board_id, play.player_id, change.version, change.after)
            ctx.broker.publish(board_id)
    return result


def _change(result: BoardResult, player_id: str) -> Notice | None:
    """What the play changed on one board: exactly its entry, as the change feed's notice of
    it will say (a page the entry does not reach stays cached); None for a result replayed
    from a record, which may have changed anything of the board."""
    board = result.board
    if board is None or result.version is None:
        return None
    return Notice(
        NoticeKind.PUT,
        board=result.leaderboard_id,
        player=player_id,
        before=result.previous_rank_value,
        after=int(rank_value(result.entry.score, board.score_width, board.sort_order)),
        version=result.version,
        fresh=result.first,
    )
