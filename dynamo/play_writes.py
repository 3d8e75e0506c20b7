"""Recording a play: one play written on one or more boards in ONE TransactWriteItems.

A play is read (one consistent BatchGetItem: the player, its entry guard on each board, and
the play record when the client names the play; beside it, each board by one consistent Query,
which on a board of one partition brings its count along; a write-sharded board's count
shards are not read), decided per board by the board's operator, then written at once: the
Session, the player's statistics, each board's entry change (and a first entry's count), and
the play record. Conditions make a race with another play of the same player cancel the
transaction rather than lose an update; a cancelled transaction is read again and retried a
bounded number of times. Nothing is half-written.

The transaction holds the player's own items and, on a first entry, the player's count shard
of the board; never the board's own item, which every play of the board would share (DynamoDB
cancels a transaction that touches an item another one in flight holds). The board's
existence, window and bounds are checked from the read. A family's board that the read finds
missing is created by one conditional PutItem before the transaction, with the family's
partitions read afresh (a play that loses that race reads the board that stands, and plays on
it). Within one process, the transactions of
first entries counted in one count shard wait for each other (``Db.counts``) instead of
cancelling each other; between processes such a conflict is retried like any other race.

Failures of the database itself are BACKEND_UNAVAILABLE when nothing was written. A transaction
that may have been applied without the database confirming it (its connection dropped, it
timed out, it got a 5xx answer) is OUTCOME_UNKNOWN: every attempt of one transaction carries
the same ClientRequestToken, so the retries botocore makes cannot apply it twice, and no new
attempt (with a new token) is made after such a failure.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem
from dynamo.entry_writes import EntryChange, entry_change, entry_write_items
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.families import (
    FamilyItem,
    concrete_board,
    create_family_board,
    get_families,
    period_window,
)
from dynamo.ids import new_session_id
from dynamo.items import now, parse, serialize
from dynamo.leaderboards import (
    LeaderboardItem,
    count_shard_item,
    get_leaderboards,
    is_family_board_id,
    read_board,
)
from dynamo.outcomes import watching
from dynamo.play_player import (
    check_playable,
    check_totals,
    count_play,
    no_player,
)
from dynamo.play_records import PLAY_RECORD, PlayRecord, fingerprint, record_of, replay
from dynamo.players import PLAYER, PlayerItem
from dynamo.plays import BoardResult, Play, PlayResult, play_session
from dynamo.reads import batch_get
from dynamo.resilience import is_backend_failure, outcome_unknown, unavailable
from dynamo.sessions import SESSION

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb.type_defs import TransactWriteItemTypeDef

__all__ = ["record_play"]

MAX_ATTEMPTS = 12
"""Times a play's transaction is tried when it loses a race (a concurrent write of an item it
holds) or is throttled; past them the play writes nothing and is refused (SUBMISSION_CONFLICT,
or BACKEND_UNAVAILABLE when DynamoDB throttled it)."""
_RACED = {"ConditionalCheckFailed", "TransactionConflict"}
_THROTTLED = {"ThrottlingError", "ProvisionedThroughputExceeded"}
"""Cancellation reasons (besides the roles' own conditions) that may pass on a retry."""
_BACKOFF_BASE = 0.005
_BACKOFF_CAP = 0.25


@dataclass(frozen=True)
class _Target:
    leaderboard_id: str
    template: LeaderboardItem | None
    """For a family's board: the board as its first play creates it."""


class _Retry(Exception):
    """The transaction was cancelled, having written nothing: it lost a race (or was
    throttled); read again and retry (``at_once``: without waiting, as nothing is in the
    way any more)."""

    def __init__(self, *, throttled: bool = False, at_once: bool = False) -> None:
        super().__init__()
        self.throttled = throttled
        self.at_once = at_once


async def record_play(db: Db, play: Play, *, clock: Callable[[], datetime] = now) -> PlayResult:
    """Record one play, whose ids and numbers are valid (resolvers/inputs.py checks a client's).
    Raises LeaderboardError for what the table refuses (an unknown player or board, a closed
    board, a score outside a board's bounds or past what the entry or the player's totals
    carry), and for a database that failed (BACKEND_UNAVAILABLE, or OUTCOME_UNKNOWN when the
    play may have been recorded all the same). Every board is decided before anything is
    written, so a play refused on one board writes nothing on any."""
    try:
        return await _record(db, play, clock)
    except (BotoCoreError, ClientError) as error:
        if is_backend_failure(error):
            raise unavailable() from error
        raise


async def _record(db: Db, play: Play, clock: Callable[[], datetime]) -> PlayResult:
    families = await get_families(db, play.family_ids) if play.family_ids else []
    digest = fingerprint(play)
    throttled = False
    async with db.players.hold(play.player_id):
        # The play's time is read in its player's turn, so that one process records a
        # player's plays in the order of their times (and of their time-sortable ids).
        at = clock()
        targets = _targets(play, families, at)
        session_id = new_session_id()
        for attempt in range(MAX_ATTEMPTS):
            try:
                return await _attempt(db, play, targets, digest, session_id, at, attempt)
            except _Retry as retry:
                throttled = retry.throttled
                if retry.at_once:
                    continue
                delay = min(_BACKOFF_CAP, _BACKOFF_BASE * 2**attempt)
                await asyncio.sleep(random.uniform(0, delay))
    if throttled:
        raise unavailable(" (throttled)")
    raise LeaderboardError(
        ErrorCode.SUBMISSION_CONFLICT,
        "too many concurrent submissions for this player; nothing was recorded, retry later",
    )


def _targets(play: Play, families: Sequence[FamilyItem | None], at: datetime) -> list[_Target]:
    """The boards of the play: the named ones, then each family's board of the period of ``at``."""
    targets = {b: _Target(b, None) for b in play.leaderboard_ids}
    for family_id, family in zip(play.family_ids, families, strict=True):
        if family is None:
            raise LeaderboardError(
                ErrorCode.LEADERBOARD_NOT_FOUND,
                f"no leaderboard family {family_id!r}",
                Subject.FAMILY,
            )
        window = period_window(family, at)
        if window is None:
            raise LeaderboardError(
                ErrorCode.LEADERBOARD_CLOSED,
                f"family {family_id!r} has no period open at this time",
                Subject.FAMILY,
            )
        targets.setdefault(
            window.leaderboard_id,
            _Target(window.leaderboard_id, concrete_board(family, window, at)),
        )
    return list(targets.values())


async def _attempt(
    db: Db,
    play: Play,
    targets: list[_Target],
    digest: str,
    session_id: str,
    at: datetime,
    attempt: int,
) -> PlayResult:
    pkey = PLAYER.key(player_id=play.player_id)
    rkey = (
        PLAY_RECORD.key(player_id=play.player_id, submission_id=play.submission_id)
        if play.submission_id
        else None
    )
    keys = [pkey, *(_guard_key(play.player_id, t) for t in targets)]
    found, boards = await asyncio.gather(
        batch_get(db, [*keys, *([rkey] if rkey else [])], consistent=True),
        get_leaderboards(db, [t.leaderboard_id for t in targets], consistent=True, count=False),
    )
    if rkey is not None and rkey in found:
        return replay(parse(PlayRecord, found[rkey]), play, digest)
    if pkey not in found:
        raise no_player(play)
    player = parse(PlayerItem, found[pkey])
    check_playable(player, play)
    check_totals(player, play)
    changes = [
        _decide(found, board, play, t, session_id, at, player)
        for t, board in zip(targets, boards, strict=True)
    ]
    for n, (target, board) in enumerate(zip(targets, boards, strict=True)):
        if board is None and target.template is not None:
            created = await create_family_board(db, target.template)
            if created is not None:
                changes[n] = _decide(found, created, play, target, session_id, at, player)
                continue
            # Another play created it first: play on the board that stands, read again.
            again = await read_board(db, target.leaderboard_id, consistent=True, count=False)
            if again is None:
                raise _Retry(at_once=True)
            changes[n] = _decide(found, again, play, target, session_id, at, player)

    session = play_session(play, session_id, at, [t.leaderboard_id for t in targets])
    roles: list[str] = []
    items: list[TransactWriteItemTypeDef] = []

    def add(role: str, op: Any) -> None:
        roles.append(role)
        items.append(op)

    add("session", _put_new(db.table, SESSION.item(session)))
    add("player", count_play(db.table, play, at, player.name_version))
    if rkey is not None:
        record = record_of(play, digest, session, changes)
        add("record", _put_new(db.table, PLAY_RECORD.item(record)))
    for change in changes:
        for role, op in entry_write_items(db.table, change):
            add(role, op)

    shards = sorted(
        {
            count_shard_item(c.board.leaderboard_id, play.player_id, c.board.partitions)
            for c in changes
            if c.first
        }
    )
    async with AsyncExitStack() as queued:
        # A first entry waits for this process's other first entries counted in its shard
        # (in key order, so that plays on several boards never wait for each other in turn).
        for shard in shards:
            await queued.enter_async_context(db.counts.hold(shard))
        with watching(session_id) as write:
            try:
                await db.transact_write_items(
                    TransactItems=items, ClientRequestToken=f"{session_id}-{attempt}"
                )
            except (BotoCoreError, ClientError, LeaderboardError) as error:
                if isinstance(error, ClientError):
                    # A cancellation is DynamoDB's answer for this token: nothing was written.
                    _raise_for_cancellation(error, roles, play)
                if write.outcome_unknown:
                    raise outcome_unknown(_unknown_detail(play, session_id)) from error
                raise
    return PlayResult(
        session=session,
        boards=[
            BoardResult(
                leaderboard_id=c.board.leaderboard_id,
                entry=c.entry,
                improved=c.changed,
                board=_after(c),
                version=c.version if c.changed else None,
                first=c.first,
                previous_rank_value=c.previous_rank_value,
            )
            for c in changes
        ],
    )


def _after(change: EntryChange) -> LeaderboardItem:
    """The board as the play leaves it: a first entry adds one to a count that was read (a
    write-sharded board's was not: its count is read when asked for)."""
    board = change.board
    if not change.first or not board.counted:
        return board
    return board.model_copy(update={"entry_count": board.entry_count + 1})


def _guard_key(player_id: str, target: _Target) -> tuple[str, str]:
    return ENTRY_GUARD.key(player_id=player_id, leaderboard_id=target.leaderboard_id)


def _decide(
    found: dict[tuple[str, str], Any],
    read: LeaderboardItem | None,
    play: Play,
    target: _Target,
    session_id: str,
    at: datetime,
    player: PlayerItem,
) -> EntryChange:
    ekey = _guard_key(play.player_id, target)
    if read is not None:
        board = read
        _check_owner(board, target)
    elif target.template is not None:
        board = target.template
    else:
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_NOT_FOUND,
            f"no leaderboard {target.leaderboard_id!r}",
            Subject.LEADERBOARD,
        )
    if not board.is_open(at):
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_CLOSED,
            f"leaderboard {board.leaderboard_id!r} is not open at this time",
            Subject.LEADERBOARD,
        )
    old = parse(EntryGuardItem, found[ekey]) if ekey in found else None
    return entry_change(
        board,
        old,
        player_id=play.player_id,
        score=play.score,
        at=at,
        session_id=session_id,
        metadata=play.metadata,
        player_name=player.name,
        name_version=player.name_version,
    )


def _check_owner(board: LeaderboardItem, target: _Target) -> None:
    """Refuse a board that holds a family board's id without being that family's board (one
    created by hand before those ids were reserved)."""
    if target.template is not None and board.family_id != target.template.family_id:
        raise LeaderboardError(
            ErrorCode.LEADERBOARD_EXISTS,
            f"the board {board.leaderboard_id!r} of family {target.template.family_id!r} is "
            "held by a board that does not belong to the family; nothing was recorded",
            Subject.FAMILY,
        )
    if (
        target.template is None
        and board.family_id is None
        and is_family_board_id(board.leaderboard_id)
    ):
        raise LeaderboardError(
            ErrorCode.INVALID_ID,
            f"leaderboard {board.leaderboard_id!r} has an id of the form reserved for the "
            "boards of leaderboard families but belongs to no family; nothing was recorded",
            Subject.LEADERBOARD,
        )


def _put_new(table: str, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": table,
            "Item": serialize(item),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def _unknown_detail(play: Play, session_id: str) -> str:
    if play.submission_id is not None:
        return (
            f" as session {session_id}. Send it again with the same submissionId "
            f"({play.submission_id}), which records it at most once"
        )
    return f" as session {session_id} of player {play.player_id}"


def _raise_for_cancellation(error: ClientError, roles: list[str], play: Play) -> None:
    """Turn a cancelled transaction into a domain error, or _Retry when it lost a race (an
    identical play that won is then found by the next read and replayed) or was
    throttled."""
    if error.response["Error"]["Code"] != "TransactionCanceledException":
        return
    reasons = error.response.get("CancellationReasons", [])
    failed = [
        (role, reason.get("Code"))
        for role, reason in zip(roles, reasons, strict=False)
        if reason.get("Code") not in (None, "None")
    ]
    player = next((r for role, r in zip(roles, reasons, strict=False) if role == "player"), None)
    if ("player", "ConditionalCheckFailed") in failed:
        if player is None or not player.get("Item"):
            raise no_player(play) from None
        found = parse(PlayerItem, player["Item"])
        check_playable(found, play)
        check_totals(found, play)
        # Playable and within its sums: the player was renamed since it was read; the play
        # is read again and writes the new name into its entries.
        raise _Retry(at_once=True) from None
    if all(code in _RACED | _THROTTLED for _, code in failed):
        raise _Retry(throttled=any(code in _THROTTLED for _, code in failed)) from None
