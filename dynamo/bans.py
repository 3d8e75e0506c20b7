"""Bans: a banned player's entries leave every board, and its plays are refused.

A ban is two steps, each safe to repeat:

1. One transaction marks the Player item banned (``bannedAt``, the reason, and the id of the
   ban's action) and records the action in the moderation log. Every play's transaction is
   conditional on the Player item not being banned (dynamo/players.py ``PLAYABLE``), so from
   this write on no play of the player is recorded, not even one racing the ban: DynamoDB
   serialises the two transactions, and the play's condition fails or the play came first.
2. The player's entry guards are read with ConsistentRead (they hold AP5's entries, in the
   player's own partition), so every entry a play wrote before step 1 is seen, and the
   entries are removed as ``removeEntry`` removes one: Score item deleted, guard turned into a
   tombstone, ``entryCount`` down by one (in the player's count shard of the board). An entry
   that a board's close froze stays in its final standings (dynamo/closing.py). At most
   ``BATCH`` entries go in one transaction, which also adds them to the ban's record, so the
   record tells exactly what left.

A ban interrupted between or during the steps (the process stopped, the database failed)
finishes when sent again: the player is banned already, its ban's action is read back, and
the entries still standing are removed. Unbanning lifts the refusal of plays; entries the ban
removed stay removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dynamo.db import Db
from dynamo.entry_guards import EntryGuardItem, current_guards, player_guards
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import serialize, stamp
from dynamo.moderation import (
    MAX_LISTED,
    MODERATION,
    ModerationAction,
    ModerationItem,
    backoff,
    get_action,
    new_action,
    put_action,
    removals,
    removed_entry,
    transact,
)
from dynamo.players import PLAYER, PlayerItem, read_player
from dynamo.resilience import is_backend_failure, unavailable

__all__ = ["BATCH", "BanResult", "ban_player", "unban_player"]

BATCH = 25
"""Entries removed in one transaction: 3 items each, and the record's update (76 of
DynamoDB's 100)."""
MAX_ATTEMPTS = 5
"""Attempts of one step that lost a race (another operator acting on the same player)."""


@dataclass(frozen=True)
class BanResult:
    """What a ban did: its action as recorded, the player as banned, and the boards whose
    entries it removed in this call (their subscribers are told)."""

    action: ModerationItem
    player: PlayerItem
    boards: list[str]


async def ban_player(db: Db, *, player_id: str, reason: str, actor: str) -> BanResult:
    """Ban the player and remove every entry it has; the ban's action is returned as recorded.
    A player banned already keeps its ban (and its reason): the call removes what is left."""
    try:
        async with db.players.hold(player_id):  # in the player's turn, as its plays are
            player, action = await _mark_banned(db, player_id, reason, actor)
        boards: list[str] = []
        async for guards in player_guards(db, player_id):
            standing = [g for g in guards if not g.removed and not g.frozen]
            for start in range(0, len(standing), BATCH):
                chunk = standing[start : start + BATCH]
                action = await _remove_chunk(db, action, chunk)
                boards.extend(g.leaderboard_id for g in chunk)
    except (BotoCoreError, ClientError) as error:
        if is_backend_failure(error):
            raise unavailable(_RESUME) from error
        raise
    return BanResult(action, player, boards)


_RESUME = (
    "; the ban may be partly done: send it again, which completes it and never does anything twice"
)


async def _mark_banned(
    db: Db, player_id: str, reason: str, actor: str
) -> tuple[PlayerItem, ModerationItem]:
    """Step 1, or the ban in force when the player is banned already."""
    for _ in range(MAX_ATTEMPTS):
        player = await _read_player(db, player_id)
        if player.banned and player.ban_action_id is not None:
            action = await get_action(db, player.ban_action_id)
            if action is not None:
                return player, action
        action = new_action(
            ModerationAction.BAN_PLAYER, actor=actor, reason=reason, player_id=player_id
        )
        if await _write_ban(db, action):
            banned = player.model_copy(
                update={
                    "banned_at": action.at,
                    "ban_reason": reason,
                    "ban_action_id": action.action_id,
                }
            )
            return banned, action
    raise _busy()


async def _write_ban(db: Db, action: ModerationItem) -> bool:
    """Mark the player banned and record the action, both or neither; False when the player
    changed in between (banned by another call)."""
    assert action.player_id is not None
    items: list[Any] = [
        {
            "Update": {
                "TableName": db.table,
                "Key": serialize(PLAYER.key_attributes(player_id=action.player_id)),
                "UpdateExpression": "SET bannedAt = :at, banReason = :reason, banActionId = :id",
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(bannedAt)"
                " AND attribute_not_exists(erasingSince)",
                "ExpressionAttributeValues": serialize(
                    {
                        ":at": stamp(action.at),
                        ":reason": action.reason,
                        ":id": action.action_id,
                    }
                ),
            }
        },
        put_action(db.table, action),
    ]
    return await transact(db, items, _RESUME)


async def _remove_chunk(
    db: Db, action: ModerationItem, guards: Sequence[EntryGuardItem]
) -> ModerationItem:
    """Remove up to BATCH entries in one transaction that also adds them to the ban's record.
    An entry that changed since it was read (an operator removed it meanwhile) is read again:
    the chunk is retried with the guards as they now stand."""
    for attempt in range(MAX_ATTEMPTS):
        items = await removals(db, guards)
        listed = [removed_entry(g) for g in guards][: max(0, MAX_LISTED - len(action.removed))]
        items.append(_add_to_record(db.table, action, listed, len(guards)))
        if await transact(db, items, _RESUME):
            return action.model_copy(
                update={
                    "removed": [*action.removed, *listed],
                    "removed_count": action.removed_count + len(guards),
                }
            )
        guards = [g for g in await current_guards(db, guards) if not g.removed and not g.frozen]
        if not guards:
            return action
        await backoff(attempt)
    raise _busy()


def _add_to_record(
    table: str, action: ModerationItem, listed: list[Any], count: int
) -> dict[str, Any]:
    entries = [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in listed]
    return {
        "Update": {
            "TableName": table,
            "Key": serialize(MODERATION.key_attributes(action_id=action.action_id)),
            "UpdateExpression": "SET removed = list_append(if_not_exists(removed, :none), "
            ":entries) ADD removedCount :count",
            "ConditionExpression": "attribute_exists(pk)",
            "ExpressionAttributeValues": serialize(
                {":none": [], ":entries": entries, ":count": count}
            ),
        }
    }


async def unban_player(db: Db, *, player_id: str, reason: str, actor: str) -> ModerationItem:
    """Lift the player's ban, recording the action; PLAYER_NOT_BANNED when there is none.
    Entries the ban removed stay removed."""
    try:
        async with db.players.hold(player_id):  # in the player's turn, as its plays are
            player = await _read_player(db, player_id)
            if not player.banned:
                raise _not_banned(player_id)
            action = new_action(
                ModerationAction.UNBAN_PLAYER, actor=actor, reason=reason, player_id=player_id
            )
            items: list[Any] = [
                {
                    "Update": {
                        "TableName": db.table,
                        "Key": serialize(PLAYER.key_attributes(player_id=player_id)),
                        "UpdateExpression": "REMOVE bannedAt, banReason, banActionId",
                        "ConditionExpression": "banActionId = :id",
                        "ExpressionAttributeValues": serialize({":id": player.ban_action_id}),
                    }
                },
                put_action(db.table, action),
            ]
            if not await transact(db, items, ""):
                raise _not_banned(player_id)
    except (BotoCoreError, ClientError) as error:
        if is_backend_failure(error):
            raise unavailable() from error
        raise
    return action


async def _read_player(db: Db, player_id: str) -> PlayerItem:
    player = await read_player(db, player_id)
    if player is None or player.erasing_since is not None:
        raise LeaderboardError(
            ErrorCode.PLAYER_NOT_FOUND, f"no player {player_id!r}", Subject.PLAYER
        )
    return player


def _not_banned(player_id: str) -> LeaderboardError:
    return LeaderboardError(
        ErrorCode.PLAYER_NOT_BANNED, f"player {player_id!r} is not banned", Subject.PLAYER
    )


def _busy() -> LeaderboardError:
    return LeaderboardError(
        ErrorCode.SUBMISSION_CONFLICT,
        "the player kept changing while the ban was applied; send it again to complete it",
        Subject.PLAYER,
    )
