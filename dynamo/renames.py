"""Renaming a player: the Player item's name, then each of its entries' copy of it.

A page of a board's entries shows each player's name from the entry itself (the Score item's
``playerName``), so that it reads no Player item. A rename keeps those copies right, in three
steps, each safe to repeat:

1. The Player item takes the new name, a ``nameVersion`` one higher, and ``renaming`` (one
   UpdateItem, conditional on the player existing and not being erased). From then on a play
   that read the player before the rename is refused by its own transaction's condition on
   ``nameVersion`` and read again (dynamo/play_player.py), so every entry written since holds
   the new name.
2. The player's entry guards, read from its own partition with ConsistentRead (so that no
   entry written before step 1 is missed), lead to its Score items; each standing one takes
   the new name, on condition that it still exists (a play that moved it wrote its new item
   with the new name) and holds an older ``playerNameVersion`` (a later rename's name stays).
   After each page of guards the Player item records the last board gone through
   (``renamedTo``).
3. ``renaming`` and ``renamedTo`` are removed, on condition that no later rename began.

A rename that stops part-way (its request's budget ran low, the process stopped, the database
failed) goes on from the board it recorded when sent again; sent again once complete, it
writes nothing. The entries of a closed board take the new name too; its final results keep
none (their names are read from the Player items).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime

from botocore.exceptions import BotoCoreError, ClientError

from dynamo import budget
from dynamo.db import Db
from dynamo.entry_guards import EntryGuardItem, player_guards
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import parse, serialize, stamp
from dynamo.players import PLAYER, PlayerItem, read_player
from dynamo.resilience import is_backend_failure, unavailable
from dynamo.single_writes import update_when_free

__all__ = ["PAGE", "RenameResult", "rename_player"]

PAGE = 100
"""Entry guards read at a time; the rename records how far it went after each page."""
IN_FLIGHT = 10
"""Score items of one page renamed at once."""
ROOM_SECONDS = 2.0
"""Seconds of the request's budget a page needs: below that, the rename stops and says so."""
ROOM_CALLS = PAGE + 2
"""DynamoDB calls of the request's budget a page may take."""
_RESUME = "; the rename may be partly done: send it again, which goes on from where it stopped"


@dataclass(frozen=True)
class RenameResult:
    player: PlayerItem
    """The player as the rename leaves it (its new name)."""
    complete: bool
    """Whether every entry holds the new name (False when the request's budget ran low)."""
    boards: list[str]
    """The boards of the entries this call wrote the new name into."""


async def rename_player(db: Db, player_id: str, name: str, *, at: datetime) -> RenameResult:
    """Give the player ``name`` (already validated), on its item and its entries.
    PLAYER_NOT_FOUND for an unknown player, or one being erased; BACKEND_UNAVAILABLE when the
    database failed (the rename then goes on when sent again)."""
    try:
        player = await _begin(db, player_id, name, at)
        if not player.renaming:
            return RenameResult(player=player, complete=True, boards=[])
        boards, complete = await _spread(db, player)
        if complete:
            await _finish(db, player)
            player = player.model_copy(update={"renaming": None, "renamed_to": None})
    except (BotoCoreError, ClientError) as error:
        if is_backend_failure(error):
            raise unavailable(_RESUME) from error
        raise
    return RenameResult(player=player, complete=complete, boards=boards)


async def _begin(db: Db, player_id: str, name: str, at: datetime) -> PlayerItem:
    """Step 1, unless the player holds that name already (then the player as it stands: a
    rename to it still under way goes on)."""
    player = await read_player(db, player_id)
    if player is None or player.erasing_since is not None:
        raise _not_found(player_id)
    if player.name == name:
        return player
    try:
        response = await db.client.update_item(
            TableName=db.table,
            Key=serialize(PLAYER.key_attributes(player_id=player_id)),
            UpdateExpression="SET #name = :name, nameVersion = if_not_exists(nameVersion, :zero)"
            " + :one, renaming = :true, updatedAt = :at REMOVE renamedTo",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(erasingSince)",
            ExpressionAttributeNames={"#name": "name"},
            ExpressionAttributeValues=serialize(
                {":name": name, ":zero": 0, ":one": 1, ":true": True, ":at": stamp(at)}
            ),
            ReturnValues="ALL_NEW",
        )
    except ClientError as error:
        if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
            raise _not_found(player_id) from None
        raise
    return parse(PlayerItem, response["Attributes"])


async def _spread(db: Db, player: PlayerItem) -> tuple[list[str], bool]:
    """Step 2 from the board recorded on; the boards of the entries renamed, and whether it
    went through them all (False when the request's budget ran low; True as well when a
    later rename took over)."""
    renamed: list[str] = []
    pages = player_guards(db, player.player_id, page_size=PAGE, after_board=player.renamed_to)
    try:
        while _room_left():
            page = await anext(pages, None)
            if page is None:
                return renamed, True
            renamed += await _rename_page(db, player, page)
            if page and not await _record(db, player, page[-1].leaderboard_id):
                return renamed, True  # a later rename goes on with its own name
        return renamed, False
    finally:
        await pages.aclose()


async def _rename_page(db: Db, player: PlayerItem, page: list[EntryGuardItem]) -> list[str]:
    """The new name into the Score items of a page of guards, IN_FLIGHT at once; the boards
    of those that took it."""
    gate = asyncio.Semaphore(IN_FLIGHT)
    standing = [g for g in page if not g.removed]

    async def rename(guard: EntryGuardItem) -> bool:
        async with gate:
            return await _rename_entry(db, player, guard)

    took = await asyncio.gather(*(rename(g) for g in standing))
    return [g.leaderboard_id for g, done in zip(standing, took, strict=True) if done]


async def _rename_entry(db: Db, player: PlayerItem, guard: EntryGuardItem) -> bool:
    """The new name into the guard's Score item, if it still stands and holds an older one."""
    pk, sk = guard.score_key
    return await update_when_free(
        db,
        Key=serialize({"pk": pk, "sk": sk}),
        UpdateExpression="SET playerName = :name, playerNameVersion = :version",
        ConditionExpression="attribute_exists(pk) AND playerId = :player AND"
        " (attribute_not_exists(playerNameVersion) OR playerNameVersion < :version)",
        ExpressionAttributeValues=serialize(
            {":name": player.name, ":version": player.name_version, ":player": player.player_id}
        ),
    )


async def _record(db: Db, player: PlayerItem, board_id: str) -> bool:
    """The last board the rename went through, kept on the Player item; False when a later
    rename began (which goes through the entries again)."""
    return await update_when_free(
        db,
        Key=serialize(PLAYER.key_attributes(player_id=player.player_id)),
        UpdateExpression="SET renamedTo = :board",
        ConditionExpression="nameVersion = :version",
        ExpressionAttributeValues=serialize({":board": board_id, ":version": player.name_version}),
    )


async def _finish(db: Db, player: PlayerItem) -> None:
    """Step 3 (nothing to do once a later rename began: it finishes its own)."""
    await update_when_free(
        db,
        Key=serialize(PLAYER.key_attributes(player_id=player.player_id)),
        UpdateExpression="REMOVE renaming, renamedTo",
        ConditionExpression="nameVersion = :version",
        ExpressionAttributeValues=serialize({":version": player.name_version}),
    )


def _room_left() -> bool:
    """Whether the request (if any) has budget left for one more page."""
    return budget.room_left(ROOM_SECONDS, ROOM_CALLS)


def _not_found(player_id: str) -> LeaderboardError:
    return LeaderboardError(ErrorCode.PLAYER_NOT_FOUND, f"no player {player_id!r}", Subject.PLAYER)
