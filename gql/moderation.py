"""Moderation types: the log's actions, the entries they removed, and the inputs and results
of removeEntry, banPlayer, unbanPlayer and erasePlayer. Everything here needs an admin key."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dynamo.erasure import ErasureProgress
from dynamo.moderation import ModerationItem, RemovedEntry
from gql.enums import ModerationAction as ModerationActionKind
from gql.errors import UserError
from gql.scalars import Long

__all__ = [
    "BanPlayerInput",
    "BanPlayerPayload",
    "ErasePlayerInput",
    "ErasePlayerPayload",
    "Erased",
    "ModerationAction",
    "ModerationActionKind",
    "RemoveEntryInput",
    "RemoveEntryPayload",
    "RemovedScore",
    "UnbanPlayerInput",
    "UnbanPlayerPayload",
]


@strawberry.type(description="An entry an action took off a board, as it stood.")
class RemovedScore:
    leaderboard_id: strawberry.ID = strawberry.field(description="The board it was on.")
    score: Long = strawberry.field(description="Its score.")
    attained_at: datetime = strawberry.field(description="When it was attained.")
    session_id: strawberry.ID | None = strawberry.field(description="The session that attained it.")

    @classmethod
    def of(cls, entry: RemovedEntry) -> RemovedScore:
        session = entry.session_id
        return cls(
            leaderboard_id=strawberry.ID(entry.leaderboard_id),
            score=Long(entry.score),
            attained_at=entry.attained_at,
            session_id=strawberry.ID(session) if session else None,
        )


@strawberry.type(description="One moderation action, as the log records it.")
class ModerationAction:
    id: strawberry.ID = strawberry.field(description="The action's id (time-sortable).")
    at: datetime = strawberry.field(description="When it took effect.")
    actor: str = strawberry.field(
        description="Who acted: a short fingerprint of the admin key (the first 12 hex digits "
        "of its SHA-256), never the key."
    )
    action: ModerationActionKind = strawberry.field(description="What was done.")
    reason: str = strawberry.field(description="Why, as the operator gave it.")
    leaderboard_id: strawberry.ID | None = strawberry.field(
        description="The board acted on, if one."
    )
    player_id: strawberry.ID | None = strawberry.field(description="The player acted on, if one.")
    removed: list[RemovedScore] = strawberry.field(
        description="The entries the action took off boards (a ban lists its first 1000)."
    )
    removed_count: int = strawberry.field(
        description="How many entries the action took off boards, listed or not."
    )

    @classmethod
    def of(cls, item: ModerationItem) -> ModerationAction:
        board, player = item.leaderboard_id, item.player_id
        return cls(
            id=strawberry.ID(item.action_id),
            at=item.at,
            actor=item.actor,
            action=item.action,
            reason=item.reason,
            leaderboard_id=strawberry.ID(board) if board is not None else None,
            player_id=strawberry.ID(player) if player is not None else None,
            removed=[RemovedScore.of(e) for e in item.removed],
            removed_count=max(item.removed_count, len(item.removed)),
        )


@strawberry.input(description="The entry to take off a board, and why.")
class RemoveEntryInput:
    leaderboard_id: strawberry.ID = strawberry.field(description="The board.")
    player_id: strawberry.ID = strawberry.field(description="Whose entry.")
    reason: str = strawberry.field(
        description="Why, for the moderation log: 1-500 printable characters."
    )


@strawberry.type(description="The result of removeEntry.")
class RemoveEntryPayload:
    removed: RemovedScore | None = strawberry.field(
        description="The entry as it stood when removed; null on error."
    )
    action: ModerationAction | None = strawberry.field(
        description="The action as the moderation log records it; null on error."
    )
    errors: list[UserError] = strawberry.field(description="Why nothing was written, if so.")


@strawberry.input(description="A player to act on, and why.")
class _PlayerAction:
    player_id: strawberry.ID = strawberry.field(description="The player.")
    reason: str = strawberry.field(
        description="Why, for the moderation log: 1-500 printable characters."
    )


@strawberry.input(description="The player to ban, and why.")
class BanPlayerInput(_PlayerAction):
    pass


@strawberry.type(description="The result of banPlayer.")
class BanPlayerPayload:
    action: ModerationAction | None = strawberry.field(
        description="The ban as the moderation log records it, with every entry it took off a "
        "board (the first 1000 listed, all counted); null on error. A ban sent again for a "
        "banned player answers the ban in force, completed."
    )
    errors: list[UserError] = strawberry.field(description="Why nothing was written, if so.")


@strawberry.input(description="The player whose ban to lift, and why.")
class UnbanPlayerInput(_PlayerAction):
    pass


@strawberry.type(description="The result of unbanPlayer.")
class UnbanPlayerPayload:
    action: ModerationAction | None = strawberry.field(
        description="The action as the moderation log records it; null on error."
    )
    errors: list[UserError] = strawberry.field(description="Why nothing was written, if so.")


@strawberry.input(description="The player whose data to erase.")
class ErasePlayerInput:
    player_id: strawberry.ID = strawberry.field(description="The player.")
    reason: str | None = strawberry.field(
        default=None,
        description="Why, for the moderation log (1-500 printable characters). It must not "
        "name the player: a reason holding its id, its name or its e-mail address (as a whole "
        "word, in any case or spelling, the address's local part alone included) is refused "
        "with INVALID_ARGUMENT at reason, and nothing is written. By default: the player's "
        "data was erased on request.",
    )


@strawberry.type(description="What one erasePlayer call deleted.")
class Erased:
    entries: int = strawberry.field(description="Entries taken off boards.")
    sessions: int = strawberry.field(description="Sessions deleted.")
    play_records: int = strawberry.field(
        description="Records of plays sent with a submissionId, deleted."
    )
    other_items: int = strawberry.field(
        description="Other items of the player deleted (the marks of entries removed before)."
    )
    moderation_records: int = strawberry.field(
        description="Moderation records that named the player and no longer do."
    )

    @classmethod
    def of(cls, progress: ErasureProgress) -> Erased:
        return cls(
            entries=progress.entries,
            sessions=progress.sessions,
            play_records=progress.play_records,
            other_items=progress.other_items,
            moderation_records=progress.moderation_records,
        )


@strawberry.type(description="The result of erasePlayer.")
class ErasePlayerPayload:
    complete: bool = strawberry.field(
        description="Whether the erasure is complete. False when this call stopped within its "
        "request's budget: send it again, and it goes on from where it stopped."
    )
    erased: Erased | None = strawberry.field(description="What this call deleted; null on error.")
    action: ModerationAction | None = strawberry.field(
        description="Once complete: the erasure as the moderation log records it, without "
        "the player's id."
    )
    errors: list[UserError] = strawberry.field(
        description="Why the call failed. An erasure that failed part-way goes on when sent again."
    )
