"""Moderation: an operator's actions on the boards, and the log that records each of them.

Every action writes one Moderation action item in the same transaction as the change it
makes, so the log holds exactly the actions that took effect. The log is read newest first:
all of it (partition ``MODERATION``), one board's (GSI1) or one player's (GSI2); an action
about no board, or no player, is not in that index.

Removing an entry deletes its Score item and turns its entry guard into a tombstone: the
guard keeps the removed entry and gains a version, marked ``removed``. The board's
``entryCount`` drops by one, in the player's count shard of the board (under the partition key
of the player's Score item; never the board's own item, which plays of other players would
then share with the removal). The tombstone makes
the removal a change like any other for readers of the table's stream (the rank index drops
the entry), and lets the player's next entry on the board continue the guard's versions; to
plays, a tombstone is no entry.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dynamo.cursors import CursorShape
from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.ids import new_session_id
from dynamo.items import Item, key, now, parse, serialize
from dynamo.keys import INDEX_ATTRIBUTES, Entity
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem, count_change
from dynamo.outcomes import watching
from dynamo.reads import Page, batch_get, query_page, range_page
from dynamo.resilience import is_backend_failure, outcome_unknown, unavailable
from dynamo.table import GSI1, GSI2

__all__ = [
    "MAX_LISTED",
    "MODERATION",
    "ModerationAction",
    "ModerationItem",
    "RemovedEntry",
    "backoff",
    "entry_removal_items",
    "get_action",
    "moderation_log",
    "new_action",
    "put_action",
    "removals",
    "remove_entry",
    "removed_entry",
    "transact",
]

MODERATION = Entity.declare(
    "Moderation action",
    pk="MODERATION",
    sk="ACTION#{action_id}",
    gsi1=("MODERATION#LEADERBOARD#{leaderboard_id}", "ACTION#{action_id}"),
    gsi2=("MODERATION#PLAYER#{player_id}", "ACTION#{action_id}"),
)

MAX_ATTEMPTS = 5
"""Reads and conditional writes of one removal, when plays keep changing the entry."""
MAX_LISTED = 1000
"""The entries an action's record lists one by one (it counts all of them), which keeps the
record of a ban of a player on thousands of boards well under DynamoDB's item size."""


class ModerationAction(StrEnum):
    REMOVE_ENTRY = "REMOVE_ENTRY"
    BAN_PLAYER = "BAN_PLAYER"
    UNBAN_PLAYER = "UNBAN_PLAYER"
    ERASE_PLAYER = "ERASE_PLAYER"


class RemovedEntry(Item):
    """An entry an action took off a board, as it stood."""

    leaderboard_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None


class ModerationItem(Item):
    action_id: str
    """Time-sortable (a ULID): the log reads newest first."""
    action: ModerationAction
    at: datetime
    actor: str
    """The fingerprint of the key that acted (never the key)."""
    reason: str
    leaderboard_id: str | None = None
    player_id: str | None = None
    """None for an erasure: its record does not name the player."""
    removed: list[RemovedEntry] = []
    """The entries the action took off boards (a ban lists its first MAX_LISTED)."""
    removed_count: int = 0
    """How many entries the action took off boards, listed or not."""


async def remove_entry(
    db: Db, *, leaderboard_id: str, player_id: str, reason: str, actor: str
) -> ModerationItem:
    """Take the player's entry off the board in one transaction, conditional on the entry
    being the one read; the action recorded (with the entry as it stood) is returned.
    ENTRY_NOT_FOUND (nothing written) when the player has none there."""
    try:
        # In the player's turn, as its plays are: within one process, a play is recorded
        # wholly before or wholly after the removal, in the order of their times.
        async with db.players.hold(player_id):
            for attempt in range(MAX_ATTEMPTS):
                action = await _attempt(db, leaderboard_id, player_id, reason, actor)
                if action is not None:
                    return action
                await backoff(attempt)
    except (BotoCoreError, ClientError) as error:
        if is_backend_failure(error):
            raise unavailable() from error
        raise
    raise LeaderboardError(
        ErrorCode.SUBMISSION_CONFLICT,
        "the entry kept changing while it was being removed; nothing was removed, retry",
    )


async def _attempt(
    db: Db, leaderboard_id: str, player_id: str, reason: str, actor: str
) -> ModerationItem | None:
    """One read and conditional write; None when a play changed the entry in between."""
    bkey = LEADERBOARD.key(leaderboard_id=leaderboard_id)
    gkey = ENTRY_GUARD.key(player_id=player_id, leaderboard_id=leaderboard_id)
    found = await batch_get(db, [bkey, gkey], consistent=True)
    if bkey not in found:
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_NOT_FOUND,
            f"no leaderboard {leaderboard_id!r}",
            Subject.LEADERBOARD,
        )
    board = parse(LeaderboardItem, found[bkey])
    guard = parse(EntryGuardItem, found[gkey]) if gkey in found else None
    if board.closing_since is not None or (guard is not None and guard.frozen):
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_CLOSED,
            f"leaderboard {leaderboard_id!r} is closing or final: its standings are frozen "
            "(an erasure of the player still takes its entry and result)",
            Subject.LEADERBOARD,
        )
    if guard is None or guard.removed:
        raise LeaderboardError(
            ErrorCode.ENTRY_NOT_FOUND,
            f"player {player_id!r} has no entry on {leaderboard_id!r}",
            Subject.PLAYER,
        )
    action = new_action(
        ModerationAction.REMOVE_ENTRY,
        actor=actor,
        reason=reason,
        leaderboard_id=leaderboard_id,
        player_id=player_id,
    ).model_copy(update={"removed": [removed_entry(guard)], "removed_count": 1})
    items = [
        *entry_removal_items(db.table, guard, board=board),
        put_action(db.table, action),
    ]
    with watching(f"moderation action {action.action_id}") as write:
        try:
            await db.transact_write_items(TransactItems=items, ClientRequestToken=action.action_id)
        except (BotoCoreError, ClientError) as error:
            if (
                isinstance(error, ClientError)
                and error.response["Error"]["Code"] == "TransactionCanceledException"
            ):
                return None  # the entry changed since it was read: read it again
            if write.outcome_unknown:
                raise outcome_unknown(f" (moderation action {action.action_id})") from error
            raise
    return action


async def backoff(attempt: int) -> None:
    """Wait a little, at random, before attempt ``attempt + 1`` of a write that lost a race:
    the writes it raced (plays, or first entries of other players on its count shards) are
    then done, and attempts that raced each other do not meet again."""
    await asyncio.sleep(random.uniform(0, min(0.25, 0.005 * 2**attempt)))


def removed_entry(guard: EntryGuardItem) -> RemovedEntry:
    return RemovedEntry(
        leaderboard_id=guard.leaderboard_id,
        score=guard.score,
        attained_at=guard.attained_at,
        session_id=guard.session_id,
    )


def new_action(
    action: ModerationAction,
    *,
    actor: str,
    reason: str,
    leaderboard_id: str | None = None,
    player_id: str | None = None,
) -> ModerationItem:
    """An action about to be recorded, with a new time-sortable id and the time now."""
    return ModerationItem(
        action_id=new_session_id(),
        action=action,
        at=now(),
        actor=actor,
        reason=reason,
        leaderboard_id=leaderboard_id,
        player_id=player_id,
    )


def put_action(table: str, action: ModerationItem) -> dict[str, Any]:
    """The transaction item that records an action (once: its id is new)."""
    return {
        "Put": {
            "TableName": table,
            "Item": serialize(MODERATION.item(action)),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


async def removals(db: Db, guards: Sequence[EntryGuardItem], *, erase: bool = False) -> list[Any]:
    """The transaction items that take the entries ``guards`` hold off their boards (see
    :func:`entry_removal_items`), the boards' items read consistently first (their partitions
    place the count shards): a board that is gone (its time to live ran out) has no count to
    keep."""
    keys = [LEADERBOARD.key(leaderboard_id=g.leaderboard_id) for g in guards]
    found = await batch_get(db, keys, consistent=True)
    items: list[Any] = []
    for guard, board_key in zip(guards, keys, strict=True):
        board = parse(LeaderboardItem, found[board_key]) if board_key in found else None
        items.extend(entry_removal_items(db.table, guard, board=board, erase=erase))
    return items


def entry_removal_items(
    table: str, guard: EntryGuardItem, *, board: LeaderboardItem | None, erase: bool = False
) -> list[Any]:
    """The transaction items that take the entry ``guard`` holds off its board, conditional
    on the guard still holding it: its Score item (where the guard says it is) is deleted,
    and but for a ``board`` that is gone (None) the board's ``entryCount`` drops by one in the
    player's count shard (where the board's partitions put it), which carries the guard's
    ``ttl`` (the board's), so that a shard written as the board expires expires with it. The
    guard becomes a tombstone, or with ``erase`` is deleted. Only an erasure takes an entry
    its board's close froze (dynamo/closing.py)."""
    frozen = "" if erase else " AND attribute_not_exists(frozen)"
    condition = {
        "ConditionExpression": f"scoreSk = :sk AND NOT (removed = :true){frozen}",
        "ExpressionAttributeValues": serialize({":sk": guard.score_sk, ":true": True}),
    }
    if erase:
        guard_key = ENTRY_GUARD.key_attributes(
            player_id=guard.player_id, leaderboard_id=guard.leaderboard_id
        )
        guard_item: dict[str, Any] = {
            "Delete": {"TableName": table, "Key": serialize(guard_key), **condition}
        }
    else:
        tombstone = guard.model_copy(update={"version": guard.version + 1, "removed": True})
        guard_item = {
            "Put": {"TableName": table, "Item": serialize(ENTRY_GUARD.item(tombstone)), **condition}
        }
    items = [guard_item, {"Delete": {"TableName": table, "Key": key(*guard.score_key)}}]
    if board is not None:
        items.append(
            count_change(
                table,
                guard.leaderboard_id,
                guard.player_id,
                -1,
                partitions=board.partitions,
                ttl=guard.ttl,
            )
        )
    return items


async def moderation_log(
    db: Db,
    first: int,
    after: str | None,
    *,
    leaderboard_id: str | None = None,
    player_id: str | None = None,
) -> Page[ModerationItem]:
    """The actions, newest first: all, one board's (GSI1), one player's (GSI2), or one
    player's on one board (the player's, filtered by board)."""
    if player_id is not None:
        index, (ipk, isk) = GSI2, MODERATION.indexes[GSI2]
        pk = ipk.fill(player_id=player_id)
    elif leaderboard_id is not None:
        index, (ipk, isk) = GSI1, MODERATION.indexes[GSI1]
        pk = ipk.fill(leaderboard_id=leaderboard_id)
    else:
        return await _all_actions(db, first, after)
    pk_name, sk_name = INDEX_ATTRIBUTES[index]
    both = player_id is not None and leaderboard_id is not None
    return await query_page(
        db,
        ModerationItem,
        key_condition=f"{pk_name} = :pk",
        values={":pk": pk, **({":board": leaderboard_id} if both else {})},
        cursor_shape=CursorShape(
            exact={pk_name: pk},
            prefixes={
                sk_name: isk.prefix,
                "pk": MODERATION.pk.prefix,
                "sk": MODERATION.sk.prefix,
            },
        ),
        first=first,
        after=after,
        index=index,
        filter_expression="leaderboardId = :board" if both else None,
    )


async def _all_actions(db: Db, first: int, after: str | None) -> Page[ModerationItem]:
    pk, prefix = MODERATION.pk.fill(), MODERATION.sk.prefix
    return await range_page(db, ModerationItem, pk, prefix, first, after)


async def get_action(db: Db, action_id: str) -> ModerationItem | None:
    """One recorded action, read consistently."""
    found = await batch_get(db, [MODERATION.key(action_id=action_id)], consistent=True)
    raw = next(iter(found.values()), None)
    return parse(ModerationItem, raw) if raw is not None else None


async def transact(db: Db, items: list[Any], resume: str) -> bool:
    """Write the items of one step of an action in one transaction; False when a condition
    failed (nothing was written). A step's outcome that the database did not confirm is
    OUTCOME_UNKNOWN, its message ending with ``resume`` (how to go on)."""
    token = new_session_id()
    with watching(f"moderation step {token}") as write:
        try:
            await db.transact_write_items(TransactItems=items, ClientRequestToken=token)
        except (BotoCoreError, ClientError) as error:
            if (
                isinstance(error, ClientError)
                and error.response["Error"]["Code"] == "TransactionCanceledException"
            ):
                return False
            if write.outcome_unknown:
                raise outcome_unknown(resume) from error
            raise
    return True
