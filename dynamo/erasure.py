"""Erasure: everything the table holds about a player is deleted, on request.

The player's items all sit in its own partition (``PLAYER#<id>``: the Player item, its entry
guards, sessions and play records); its entries sit on the boards (Score items, found from
the guards); its e-mail claim sits under its address; and moderation records of actions
taken on it name it. An erasure goes through them in this order, each step safe to repeat:

1. The Player item is read, and the operator's reason is refused (INVALID_ARGUMENT, nothing
   written) when it names the player: its id, its name or its e-mail address, however spelled
   (see dynamo/mentions.py). Then it is marked ``erasingSince``: from then on the player's
   plays are refused (its transaction's condition, as for a ban), so nothing new appears
   behind the erasure.
2. The partition is read in pages with ConsistentRead. Entries are taken off their boards in
   bounded transactions (the guard and the Score item deleted, ``entryCount`` down by one in
   the player's count shard of each board, the Player item counting them); everything else in
   the partition but the Player item is deleted in batches of 25.
3. The moderation records of actions on the player stop naming it: the player's id leaves
   them (and with it their place in the player's index), and a reason that holds its id, name
   or address is replaced.
4. The whole moderation log is searched, in the order of its actions, for reasons that hold
   the player's id or address (records of actions on other players); each is replaced. How far
   the search went is kept on the Player item, so that a call that stops goes on from there.
5. One transaction deletes the Player item and the e-mail claim and records the erasure in
   the moderation log, without naming the player.

Deleted entry guards reach the rank index through the table's stream, which forgets the
player on each board. An erasure that stops part-way (its request's budget ran low, the
process stopped, the database failed) goes on from where it was when sent again; once it is
complete the player is unknown (PLAYER_NOT_FOUND).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dynamo import budget
from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem, current_guards
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import deserialize, now, serialize, stamp
from dynamo.keys import INDEX_ATTRIBUTES
from dynamo.mentions import Mentions
from dynamo.moderation import (
    MODERATION,
    ModerationAction,
    ModerationItem,
    backoff,
    new_action,
    put_action,
    removals,
    transact,
)
from dynamo.play_records import PLAY_RECORD
from dynamo.players import EMAIL_CLAIM, PLAYER, PlayerItem, read_player
from dynamo.reads import count
from dynamo.resilience import is_backend_failure, unavailable
from dynamo.sessions import SESSION
from dynamo.table import GSI2, Key

__all__ = [
    "ERASED_REASON",
    "ErasureProgress",
    "ErasureResult",
    "count_player_items",
    "erase_player",
]

ENTRY_BATCH = 25
"""Entries taken off boards in one transaction: 3 items each, and the Player item's count."""
DELETE_BATCH = 25
"""Items deleted in one BatchWriteItem (DynamoDB's most)."""
PAGE = 100
"""Items read in one Query."""
LOG_PAGE = 1000
"""Moderation records read in one Query of the whole log (or 1 MB of them, if less)."""
MAX_UNPROCESSED_ROUNDS = 8
"""Rounds of resending the deletes a BatchWriteItem left unprocessed (throttling)."""
ROOM_SECONDS = 2.0
ROOM_CALLS = 40
"""What must be left of a request's budget to begin one more step; below it, the erasure
stops and answers that it is not complete yet."""
REDACTED = "(redacted: it named an erased player)"
ERASED_REASON = "the player's data was erased on request"


@dataclass
class ErasureProgress:
    """What an erasure deleted so far in this call."""

    entries: int = 0
    """Entries taken off boards."""
    sessions: int = 0
    play_records: int = 0
    other_items: int = 0
    """Other items of the player's partition (tombstones of removed entries)."""
    moderation_records: int = 0
    """Moderation records that stopped naming the player: those of actions on it, and those
    of actions on others whose reason held its id or address."""

    @property
    def items(self) -> int:
        """Items of the player's partition deleted (the Player item aside)."""
        return self.entries + self.sessions + self.play_records + self.other_items


@dataclass(frozen=True)
class ErasureResult:
    complete: bool
    """False when the call stopped before the end: send it again to go on."""
    progress: ErasureProgress = field(default_factory=ErasureProgress)
    action: ModerationItem | None = None
    """The erasure's moderation record, once complete."""
    boards: list[str] = field(default_factory=list)
    """The boards whose entries this call took off (their subscribers are told)."""


async def erase_player(
    db: Db,
    *,
    player_id: str,
    actor: str,
    reason: str = ERASED_REASON,
    on_progress: Callable[[ErasureProgress], None] | None = None,
) -> ErasureResult:
    """Erase the player (see the module's description). Without a request budget (the
    operators' command) it runs to the end; within one, it stops while room is left and
    answers ``complete=False``. A ``reason`` that names the player is INVALID_ARGUMENT
    (subject REASON), checked on every call before anything is written; the default one is
    the service's own text and names no one."""
    progress = ErasureProgress()
    boards: list[str] = []

    def step() -> None:
        if on_progress is not None:
            on_progress(progress)

    try:
        player, mentions = await _begin(db, player_id, reason)
        if not await _erase_partition(db, player_id, progress, boards, step):
            return ErasureResult(complete=False, progress=progress, boards=boards)
        if not await _unname_records(db, player, mentions, progress, step):
            return ErasureResult(complete=False, progress=progress, boards=boards)
        if not await _search_log(db, player, mentions, progress, step):
            return ErasureResult(complete=False, progress=progress, boards=boards)
        action = await _finish(db, player_id, actor, reason)
    except (BotoCoreError, ClientError) as error:
        if is_backend_failure(error):
            raise unavailable(_RESUME) from error
        raise
    return ErasureResult(complete=True, progress=progress, action=action, boards=boards)


_RESUME = "; the erasure may be partly done: send it again, which goes on from where it stopped"


async def count_player_items(db: Db, player_id: str) -> int:
    """How many items the player's partition holds besides the Player item (what an erasure
    deletes there): for a progress bar."""
    pk = PLAYER.pk.fill(player_id=player_id)
    total = await count(db, key_condition="pk = :pk", values={":pk": pk})
    return max(0, total - 1)


def _room_left() -> bool:
    """Whether the request (if any) has enough budget left for one more step."""
    return budget.room_left(ROOM_SECONDS, ROOM_CALLS)


async def _begin(db: Db, player_id: str, reason: str) -> tuple[PlayerItem, Mentions]:
    """Step 1: the player, its erasure's reason checked, marked as being erased; and the
    searches for what names it."""
    player = await _player(db, player_id)
    mentions = Mentions(player)
    named = mentions.of(reason) if reason != ERASED_REASON else None
    if named is not None:
        raise LeaderboardError(
            ErrorCode.INVALID_ARGUMENT,
            f"reason must not name the player (it holds the player's {named}); nothing was written",
            Subject.REASON,
        )
    if player.erasing_since is None:
        await db.client.update_item(
            TableName=db.table,
            Key=serialize(PLAYER.key_attributes(player_id=player_id)),
            UpdateExpression="SET erasingSince = if_not_exists(erasingSince, :now)",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues=serialize({":now": stamp(now())}),
        )
    return player, mentions


async def _player(db: Db, player_id: str) -> PlayerItem:
    player = await read_player(db, player_id)
    if player is None:
        raise LeaderboardError(
            ErrorCode.PLAYER_NOT_FOUND, f"no player {player_id!r}", Subject.PLAYER
        )
    return player


async def _erase_partition(
    db: Db,
    player_id: str,
    progress: ErasureProgress,
    boards: list[str],
    step: Callable[[], None],
) -> bool:
    """Step 2; False when it stopped for want of budget."""
    kwargs: dict[str, Any] = {
        "TableName": db.table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": serialize({":pk": PLAYER.pk.fill(player_id=player_id)}),
        "ConsistentRead": True,
        "Limit": PAGE,
    }
    while True:
        if not _room_left():
            return False
        response = await db.query(**kwargs)
        items = [deserialize(raw) for raw in response.get("Items", [])]
        standing = [EntryGuardItem.model_validate(i) for i in items if _standing_guard(i)]
        for start in range(0, len(standing), ENTRY_BATCH):
            if not _room_left():
                return False
            erased = await _take_entries(db, player_id, standing[start : start + ENTRY_BATCH])
            boards.extend(erased)
            progress.entries += len(erased)
            step()
        rest = [i for i in items if not PLAYER.holds(i) and not _standing_guard(i)]
        for start in range(0, len(rest), DELETE_BATCH):
            if not _room_left():
                return False
            deleted = rest[start : start + DELETE_BATCH]
            await _delete(db, [(i["pk"], i["sk"]) for i in deleted])
            _count_deleted(progress, deleted)
            step()
        last = response.get("LastEvaluatedKey")
        if not last:
            return True
        kwargs["ExclusiveStartKey"] = last


def _standing_guard(item: dict[str, Any]) -> bool:
    return ENTRY_GUARD.holds(item) and not item.get("removed", False)


def _count_deleted(progress: ErasureProgress, items: Sequence[dict[str, Any]]) -> None:
    for item in items:
        if SESSION.holds(item):
            progress.sessions += 1
        elif PLAY_RECORD.holds(item):
            progress.play_records += 1
        else:
            progress.other_items += 1


async def _take_entries(db: Db, player_id: str, guards: Sequence[EntryGuardItem]) -> list[str]:
    """Take the entries off their boards in one transaction, counted on the Player item; an
    entry that changed meanwhile (an operator removed it) is read again. Returns the boards."""
    for attempt in range(5):
        items = await removals(db, guards, erase=True)
        items.append(
            {
                "Update": {
                    "TableName": db.table,
                    "Key": serialize(PLAYER.key_attributes(player_id=player_id)),
                    "UpdateExpression": "ADD erasedEntries :n",
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeValues": serialize({":n": len(guards)}),
                }
            }
        )
        if await transact(db, items, _RESUME):
            return [g.leaderboard_id for g in guards]
        current = await current_guards(db, guards)
        tombstones = [g for g in current if g.removed]
        if tombstones:
            await _delete(
                db,
                [
                    ENTRY_GUARD.key(player_id=player_id, leaderboard_id=g.leaderboard_id)
                    for g in tombstones
                ],
            )
        guards = [g for g in current if not g.removed]
        if not guards:
            return []
        await backoff(attempt)
    raise LeaderboardError(
        ErrorCode.SUBMISSION_CONFLICT,
        "the player's entries kept changing during the erasure; send it again to go on",
        Subject.PLAYER,
    )


async def _unname_records(
    db: Db,
    player: PlayerItem,
    mentions: Mentions,
    progress: ErasureProgress,
    step: Callable[[], None],
) -> bool:
    """Step 3: every moderation record naming the player stops naming it. The player's
    index (GSI2) is read again until it is empty: a record leaves it as it is changed."""
    ipk, _ = MODERATION.indexes[GSI2]
    gsi_pk, gsi_sk = INDEX_ATTRIBUTES[GSI2]
    while True:
        if not _room_left():
            return False
        response = await db.query(
            TableName=db.table,
            IndexName=GSI2,
            KeyConditionExpression=f"{gsi_pk} = :pk",
            ExpressionAttributeValues=serialize({":pk": ipk.fill(player_id=player.player_id)}),
            Limit=PAGE,
        )
        records = [deserialize(raw) for raw in response.get("Items", [])]
        if not records:
            return True
        for record in records:
            await _unname(db, record, mentions, gsi_pk, gsi_sk)
        progress.moderation_records += len(records)
        step()


async def _unname(
    db: Db, record: dict[str, Any], mentions: Mentions, gsi_pk: str, gsi_sk: str
) -> None:
    quoted = mentions.of(str(record.get("reason", ""))) is not None
    update: dict[str, Any] = {
        "TableName": db.table,
        "Key": serialize({"pk": record["pk"], "sk": record["sk"]}),
        "UpdateExpression": f"REMOVE playerId, {gsi_pk}, {gsi_sk}",
        "ConditionExpression": "attribute_exists(pk)",
    }
    if quoted:
        update["UpdateExpression"] += " SET reason = :redacted"
        update["ExpressionAttributeValues"] = serialize({":redacted": REDACTED})
    await db.client.update_item(**update)


async def _search_log(
    db: Db,
    player: PlayerItem,
    mentions: Mentions,
    progress: ErasureProgress,
    step: Callable[[], None],
) -> bool:
    """Step 4: every reason in the moderation log that holds the player's id or address is
    replaced; False when it stopped for want of budget, how far it went kept."""
    kwargs: dict[str, Any] = {
        "TableName": db.table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": serialize({":pk": MODERATION.pk.fill()}),
        "ProjectionExpression": "pk, sk, #reason",
        "ExpressionAttributeNames": {"#reason": "reason"},
        "ConsistentRead": True,
        "Limit": LOG_PAGE,
    }
    if player.erasure_searched_to is not None:
        start = MODERATION.key_attributes(action_id=player.erasure_searched_to)
        kwargs["ExclusiveStartKey"] = serialize(start)
    searched: str | None = None  # the last record this call searched
    while True:
        if not _room_left():
            return await _stop_search(db, player.player_id, searched)
        response = await db.query(**kwargs)
        for raw in response.get("Items", []):
            record = deserialize(raw)
            if mentions.of(str(record.get("reason", "")), thorough=False) is not None:
                if not _room_left():
                    return await _stop_search(db, player.player_id, searched)
                await _redact(db, record)
                progress.moderation_records += 1
            found = MODERATION.sk.match(record["sk"])
            searched = found["action_id"] if found is not None else searched
        step()
        last = response.get("LastEvaluatedKey")
        if not last:
            return True
        kwargs["ExclusiveStartKey"] = last


async def _redact(db: Db, record: dict[str, Any]) -> None:
    await db.client.update_item(
        TableName=db.table,
        Key=serialize({"pk": record["pk"], "sk": record["sk"]}),
        UpdateExpression="SET reason = :redacted",
        ConditionExpression="attribute_exists(pk)",
        ExpressionAttributeValues=serialize({":redacted": REDACTED}),
    )


async def _stop_search(db: Db, player_id: str, searched: str | None) -> bool:
    """Keep how far the search of the log went (when this call searched any of it), for the
    call that goes on. Returns False: the erasure is not complete."""
    if searched is None:
        return False
    try:
        await db.client.update_item(
            TableName=db.table,
            Key=serialize(PLAYER.key_attributes(player_id=player_id)),
            UpdateExpression="SET erasureSearchedTo = :to",
            ConditionExpression="attribute_exists(erasingSince)",
            ExpressionAttributeValues=serialize({":to": searched}),
        )
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        # Another call completed the erasure meanwhile: the next one answers PLAYER_NOT_FOUND.
    return False


async def _finish(db: Db, player_id: str, actor: str, reason: str) -> ModerationItem:
    """Step 5: the Player item and the e-mail claim deleted, the erasure recorded."""
    player = await _player(db, player_id)
    erased = player.erased_entries or 0
    action = new_action(ModerationAction.ERASE_PLAYER, actor=actor, reason=reason)
    action = action.model_copy(update={"removed_count": erased})
    items: list[Any] = [
        {
            "Delete": {
                "TableName": db.table,
                "Key": serialize(PLAYER.key_attributes(player_id=player_id)),
                "ConditionExpression": "attribute_exists(erasingSince)",
            }
        },
        {
            "Delete": {
                "TableName": db.table,
                "Key": serialize(EMAIL_CLAIM.key_attributes(email=player.email)),
                "ConditionExpression": "attribute_not_exists(pk) OR playerId = :id",
                "ExpressionAttributeValues": serialize({":id": player_id}),
            }
        },
        put_action(db.table, action),
    ]
    if not await transact(db, items, _RESUME):
        raise LeaderboardError(
            ErrorCode.PLAYER_NOT_FOUND, f"no player {player_id!r}", Subject.PLAYER
        )
    return action


async def _delete(db: Db, keys: Sequence[Key]) -> None:
    """Delete up to 25 items in one BatchWriteItem, resending what it left unprocessed."""
    requests: list[Any] = [
        {"DeleteRequest": {"Key": serialize({"pk": pk, "sk": sk})}} for pk, sk in keys
    ]
    for round_ in range(MAX_UNPROCESSED_ROUNDS):
        response = await db.client.batch_write_item(RequestItems={db.table: requests})
        requests = list(response.get("UnprocessedItems", {}).get(db.table, []))
        if not requests:
            return
        await asyncio.sleep(min(0.5, 0.02 * 2**round_))
    raise unavailable(" (throttled)" + _RESUME)
