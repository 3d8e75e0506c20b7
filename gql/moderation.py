"""Moderation types: the log's actions, the entries they removed, and removeEntry's input
and result. Everything here needs an admin key."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dynamo.moderation import ModerationItem, RemovedEntry
from gql.enums import ModerationAction as ModerationActionKind
from gql.errors import UserError
from gql.scalars import Long

__all__ = [
    "ModerationAction",
    "ModerationActionKind",
    "RemoveEntryInput",
    "RemoveEntryPayload",
    "RemovedScore",
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
        description="The entries the action took off boards."
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
