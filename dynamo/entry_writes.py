"""What one play does to one board entry, and the transaction items that write it.

A play's score must lie within the board's bounds (its ``minScore`` and ``maxScore``, which
default to 0 and the width's largest score); on an INCREMENT board they bound the amount a play
adds, while the total is held to the width. The board's operator decides the player's new
entry: BEST keeps the better of the standing
entry and the new score, LATEST takes the new score, INCREMENT adds it to the standing total.
Plays are ordered by when they were played (``attainedAt``, then the time-sortable session
id), not by when they are recorded: a play recorded after a newer one (it waited on a slower
instance, or lost a race and was retried) does not replace a newer LATEST entry, and an
INCREMENT total keeps the newer play as its attainment. When the entry changes, the entry
guard moves (conditional on still holding the entry that was read), the old Score item goes
and the new one is put (on a write-sharded board, in the player's partition of it: see
dynamo/scores.py). A first entry adds one to the player's count shard of the board, under
the same partition key as its Score item (see dynamo/leaderboards.py). Nothing else of the
board is written, not even checked: every item a play writes is its player's, or the
player's count shard, so that plays of other players on the same board never share an item
with it, and a first entry writes one partition key of the board.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem, guard_for
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import key, serialize
from dynamo.leaderboards import LeaderboardItem, Operator, count_change
from dynamo.scores import ScoreItem, rank_value, score_item

__all__ = ["EntryChange", "entry_change", "entry_write_items"]


@dataclass(frozen=True)
class EntryChange:
    """One board's part of a submission, decided from what was read."""

    board: LeaderboardItem
    old: EntryGuardItem | None
    entry: ScoreItem
    """The player's entry on the board after the play."""
    changed: bool

    @property
    def first(self) -> bool:
        """Whether the play makes the player's first entry on the board (counted in its
        ``entryCount``): none stands, or an operator removed it."""
        return self.old is None or self.old.removed

    @property
    def previous_rank_value(self) -> int | None:
        """The rank value of the entry standing before the play; None when none stood, or its
        guard was written before guards carried their rank value."""
        if self.first or self.old is None or not self.old.rank_value:
            return None
        return int(self.old.rank_value)

    @property
    def version(self) -> int:
        """The entry guard's version once the change is written."""
        return (self.old.version if self.old else 0) + 1


def entry_change(
    board: LeaderboardItem,
    old: EntryGuardItem | None,
    *,
    player_id: str,
    score: int,
    at: datetime,
    session_id: str,
    metadata: dict[str, Any] | None = None,
    player_name: str | None = None,
    name_version: int | None = None,
) -> EntryChange:
    """Apply the board's operator (an entry keeps the metadata of the play that attained it,
    and takes the player's name as the play read it, ``name_version`` its version); raises
    SCORE_OUT_OF_RANGE for a score outside the board's bounds or a result the board can't
    hold."""
    if not board.admits(score):
        raise _outside_bounds(board, score) if board.bounded else _out_of_range(board)
    fresh = ScoreItem(
        leaderboard_id=board.leaderboard_id,
        player_id=player_id,
        score=score,
        attained_at=at,
        session_id=session_id,
        ttl=board.ttl,
        metadata=metadata,
        player_name=player_name,
        player_name_version=name_version,
    )
    if old is None or old.removed:
        return EntryChange(board, old, fresh, changed=True)
    standing = ScoreItem(
        leaderboard_id=board.leaderboard_id,
        player_id=player_id,
        score=old.score,
        attained_at=old.attained_at,
        session_id=old.session_id,
        ttl=old.ttl,
        metadata=old.metadata,
        player_name=player_name,
        player_name_version=name_version,
    )
    newer = (at, session_id) > (old.attained_at, old.session_id or "")
    if board.operator is Operator.LATEST:
        return EntryChange(board, old, fresh if newer else standing, changed=newer)
    if board.operator is Operator.INCREMENT:
        if score == 0:
            return EntryChange(board, old, standing, changed=False)
        total = old.score + score
        if total > board.width_max:
            raise _out_of_range(board)
        attained = fresh if newer else standing
        return EntryChange(board, old, attained.model_copy(update={"score": total}), changed=True)
    width, order = board.score_width, board.sort_order
    if rank_value(score, width, order) > rank_value(old.score, width, order):
        return EntryChange(board, old, fresh, changed=True)
    return EntryChange(board, old, standing, changed=False)


def _outside_bounds(board: LeaderboardItem, score: int) -> LeaderboardError:
    low, high = board.bounds
    return LeaderboardError(
        ErrorCode.SCORE_OUT_OF_RANGE,
        f"score {score} is outside the bounds of {board.leaderboard_id!r} ({low} to {high})",
        Subject.SCORE,
    )


def _out_of_range(board: LeaderboardItem) -> LeaderboardError:
    return LeaderboardError(
        ErrorCode.SCORE_OUT_OF_RANGE,
        f"the entry on {board.leaderboard_id!r} must stay between 0 and {board.width_max}",
        Subject.SCORE,
    )


def entry_write_items(table: str, change: EntryChange) -> list[tuple[str, Any]]:
    """The transaction items of one board, each with its role (for cancellation reasons): on
    a first entry the count shard's increment, then the entry guard's condition or change and
    the Score items. The board's own item is not among them: its existence, window and
    bounds were checked from the consistent read before the transaction."""
    board = change.board
    items: list[tuple[str, Any]] = []
    if change.first:
        player_id = change.entry.player_id
        count = count_change(
            table, board.leaderboard_id, player_id, 1, partitions=board.partitions, ttl=board.ttl
        )
        items.append(("count", count))
    if not change.changed:
        if change.old is not None:
            # The entry stays as read: on condition that it still stands as read, so that a
            # play racing a removal of the entry is read again (and then enters afresh).
            items.append(("entry", {"ConditionCheck": _guard_check(table, change.old)}))
        return items
    guard = guard_for(board, change.entry, version=change.version)
    put_guard: dict[str, Any] = {"TableName": table, "Item": serialize(ENTRY_GUARD.item(guard))}
    if change.old is None:
        put_guard["ConditionExpression"] = "attribute_not_exists(pk)"
    else:
        check = _guard_check(table, change.old)
        put_guard["ConditionExpression"] = check["ConditionExpression"]
        put_guard["ExpressionAttributeValues"] = check["ExpressionAttributeValues"]
    items.append(("entry", {"Put": put_guard}))
    entry = change.entry.model_copy(update={"version": guard.version})
    if (
        change.old is not None
        and not change.old.removed
        and change.old.score_key != guard.score_key
    ):
        old_key = key(*change.old.score_key)
        items.append(("old_score", {"Delete": {"TableName": table, "Key": old_key}}))
    put_score = {"TableName": table, "Item": serialize(score_item(board, entry))}
    items.append(("score", {"Put": put_score}))
    return items


def _guard_check(table: str, old: EntryGuardItem) -> dict[str, Any]:
    """A condition on the entry guard still holding ``old`` as read: the same Score item, and
    still standing (or still removed), and not frozen by the board's close. A removal keeps
    the guard's ``scoreSk`` and marks it removed, so a play that read the standing entry is
    refused by the marking alone."""
    key = ENTRY_GUARD.key_attributes(player_id=old.player_id, leaderboard_id=old.leaderboard_id)
    standing = "removed = :true" if old.removed else "NOT (removed = :true)"
    return {
        "TableName": table,
        "Key": serialize(key),
        "ConditionExpression": f"scoreSk = :old AND {standing} AND attribute_not_exists(frozen)",
        "ExpressionAttributeValues": serialize({":old": old.score_sk, ":true": True}),
    }
