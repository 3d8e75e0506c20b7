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
    item: strawberry.Private[RemovedEntry]

    @strawberry.field(description="The board it was on.")
    def leaderboard_id(self) -> strawberry.ID:
        return strawberry.ID(self.item.leaderboard_id)

    @strawberry.field(description="Its score.")
    def score(self) -> Long:
        return Long(self.item.score)

    @strawberry.field(description="When it was attained.")
    def attained_at(self) -> datetime:
        return self.item.attained_at

    @strawberry.field(description="The session that attained it.")
    def session_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.item.session_id) if self.item.session_id else None


@strawberry.type(description="One moderation action, as the log records it.")
class ModerationAction:
    item: strawberry.Private[ModerationItem]

    @strawberry.field(description="The action's id (time-sortable).")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.item.action_id)

    @strawberry.field(description="When it took effect.")
    def at(self) -> datetime:
        return self.item.at

    @strawberry.field(
        description="Who acted: a short fingerprint of the admin key (the first 12 hex digits "
        "of its SHA-256), never the key."
    )
    def actor(self) -> str:
        return self.item.actor

    @strawberry.field(description="What was done.")
    def action(self) -> ModerationActionKind:
        return self.item.action

    @strawberry.field(description="Why, as the operator gave it.")
    def reason(self) -> str:
        return self.item.reason

    @strawberry.field(description="The board acted on, if one.")
    def leaderboard_id(self) -> strawberry.ID | None:
        board = self.item.leaderboard_id
        return strawberry.ID(board) if board is not None else None

    @strawberry.field(description="The player acted on, if one.")
    def player_id(self) -> strawberry.ID | None:
        player = self.item.player_id
        return strawberry.ID(player) if player is not None else None

    @strawberry.field(description="The entries the action took off boards.")
    def removed(self) -> list[RemovedScore]:
        return [RemovedScore(item=e) for e in self.item.removed]

    @classmethod
    def of(cls, item: ModerationItem) -> ModerationAction:
        return cls(item=item)


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
