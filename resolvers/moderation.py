"""Resolve functions for moderation: removing an entry, bans, erasure, and the moderation
log."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial

from dynamo import bans, erasure, moderation
from dynamo.bans import BanResult
from dynamo.erasure import ErasureResult
from dynamo.errors import ErrorCode, Subject
from dynamo.moderation import ModerationItem
from dynamo.reads import Page
from resolvers.auth import require_admin
from resolvers.changes import writing
from resolvers.context import Context
from resolvers.inputs import FieldError, clean_id, naming, page_of

__all__ = [
    "MAX_REASON",
    "ban_player",
    "clean_reason",
    "erase_player",
    "remove_entry",
    "resolve_moderation_log",
    "unban_player",
]

MAX_REASON = 500
"""Longest reason an operator gives for a moderation action, in characters, all printable."""


def clean_reason(value: str, field: str = "reason") -> str:
    """Why an operator acts, as the log keeps it: 1-500 printable characters, trimmed."""
    reason = value.strip()
    if not reason or len(reason) > MAX_REASON or not reason.isprintable():
        raise FieldError(
            ErrorCode.INVALID_ARGUMENT,
            f"{field} must be 1-{MAX_REASON} printable characters",
            field,
        )
    return reason


async def remove_entry(
    ctx: Context, leaderboard_id: str, player_id: str, reason: str
) -> ModerationItem:
    """Take the player's entry off the board (admin key); its subscribers are told."""
    require_admin(ctx)
    board = clean_id(leaderboard_id, "leaderboardId")
    player = clean_id(player_id, "playerId")
    why = clean_reason(reason)
    actor = ctx.caller.actor or ""
    with (
        writing(ctx.responses, ctx.broker, atomic=True) as written,
        naming({Subject.LEADERBOARD: "leaderboardId", Subject.PLAYER: "playerId"}),
    ):
        action = await moderation.remove_entry(
            ctx.db, leaderboard_id=board, player_id=player, reason=why, actor=actor
        )
        written.boards.append(board)
    ctx.loaders.entry.clear((player, board))
    ctx.loaders.leaderboard.clear(board)
    ctx.loaders.entry_count.written(board)
    ctx.broker.publish(board)
    return action


async def resolve_moderation_log(
    ctx: Context,
    first: int | None,
    after: str | None,
    leaderboard_id: str | None,
    player_id: str | None,
) -> Page[ModerationItem]:
    """Every moderation action, newest first, of one board or player if named (admin key)."""
    require_admin(ctx)
    board = clean_id(leaderboard_id, "leaderboardId") if leaderboard_id is not None else None
    player = clean_id(player_id, "playerId") if player_id is not None else None
    read = partial(moderation.moderation_log, ctx.db, leaderboard_id=board, player_id=player)
    return await page_of(read, first, after)


@dataclass(frozen=True)
class _Act:
    """An admin's action on a player, as the table functions take it."""

    player_id: str
    reason: str
    actor: str


def _on_player(ctx: Context, player_id: str, reason: str | None, default: str = "") -> _Act:
    """An admin's action on a player: the cleaned id and reason, and who acts."""
    require_admin(ctx)
    player = clean_id(player_id, "playerId")
    why = clean_reason(reason) if reason is not None else default
    return _Act(player_id=player, reason=why, actor=ctx.caller.actor or "")


async def ban_player(ctx: Context, player_id: str, reason: str) -> BanResult:
    """Ban the player, taking its entries off every board (admin key); the boards'
    subscribers are told."""
    act = _on_player(ctx, player_id, reason)
    with (
        writing(ctx.responses, ctx.broker, atomic=False) as written,
        naming({Subject.PLAYER: "playerId"}),
    ):
        result = await bans.ban_player(ctx.db, **asdict(act))
        written.boards += result.boards
        written.players.append(act.player_id)
    _changed(ctx, act.player_id, result.boards)
    return result


async def unban_player(ctx: Context, player_id: str, reason: str) -> ModerationItem:
    """Lift the player's ban (admin key)."""
    act = _on_player(ctx, player_id, reason)
    with (
        writing(ctx.responses, ctx.broker, atomic=True) as written,
        naming({Subject.PLAYER: "playerId"}),
    ):
        action = await bans.unban_player(ctx.db, **asdict(act))
        written.players.append(act.player_id)
    _changed(ctx, act.player_id, [])
    return action


async def erase_player(ctx: Context, player_id: str, reason: str | None) -> ErasureResult:
    """Erase the player's data (admin key), or as much as the request's budget allows; a
    reason that names the player is refused at ``reason``, and nothing is written."""
    act = _on_player(ctx, player_id, reason, erasure.ERASED_REASON)
    with (
        writing(ctx.responses, ctx.broker, atomic=False) as written,
        naming({Subject.PLAYER: "playerId", Subject.REASON: "reason"}),
    ):
        result = await erasure.erase_player(ctx.db, **asdict(act))
        written.boards += result.boards
        written.players.append(act.player_id)
    _changed(ctx, act.player_id, result.boards)
    return result


def _changed(ctx: Context, player: str, boards: list[str]) -> None:
    """Forget what this request read of the player and its boards; tell their subscribers."""
    ctx.loaders.player.clear(player)
    for board in dict.fromkeys(boards):
        ctx.loaders.entry.clear((player, board))
        ctx.loaders.leaderboard.clear(board)
        ctx.loaders.entry_count.written(board)
        ctx.broker.publish(board)
