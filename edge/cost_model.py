"""The static cost model: what each field of the schema costs, in points, and the most a
document may cost.

The cost is a worst case counted statically from the document and its variables
(edge/cost_walk.py):

- a field that reads the database or the rank index costs its reads (``FIELD_COSTS``): an item
  by key 1, a page's Query 1, a rank ``RANK`` (its entry, its board and the count above it);
- a list or a connection multiplies the cost of what is selected for each of its items by how
  many items it can return: ``first`` (default 20, at most 100), the length of an id list, the
  size of an around-me window, the boards a play names;
- everything else (scalars, fields of an item already read) is free.

A document over ``MAX_COST`` is refused before anything runs (edge/cost.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dynamo.plays import MAX_TARGETS

__all__ = ["FIELD_COSTS", "FREE", "MAX_COST", "RANK", "FieldCost"]

MAX_COST = 1000
"""The most a document may cost."""
RANK = 5
"""A rank: its entry, its board and the count of the entries above it (with the rank index,
one Redis call)."""
DEFAULT_PAGE = 20
MAX_PAGE = 100
MAX_IDS = 100
MAX_AROUND = 50

Arguments = Mapping[str, Any]


@dataclass(frozen=True)
class FieldCost:
    """What a field costs: its own reads, and, for a list, how many items it may return and
    where, below it, each item's selection is."""

    reads: int = 0
    size: Callable[[Arguments], int] | None = None
    items: tuple[str, ...] = ()
    """The path below the field to each item (``("edges", "node")`` for a connection); the
    selections there cost ``size`` times, the others (``pageInfo``) once."""
    per_item: int = 0
    """Reads each item costs by itself (a rank of each board asked)."""


def _clamp(value: Any, default: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return max(0, min(value, high))


def _first(args: Arguments) -> int:
    return _clamp(args.get("first"), DEFAULT_PAGE, MAX_PAGE)


def _ids(name: str) -> Callable[[Arguments], int]:
    def size(args: Arguments) -> int:
        value = args.get(name)
        return min(len(value), MAX_IDS) if isinstance(value, list) else 1

    return size


def _around(args: Arguments) -> int:
    before = _clamp(args.get("before", 5), 5, MAX_AROUND)
    after = _clamp(args.get("after", 5), 5, MAX_AROUND)
    return before + after + 1


def _subscribed(args: Arguments) -> int:
    return _clamp(args.get("first", 10), 10, MAX_PAGE)


_PAGE = ("edges", "node")
FREE = FieldCost()
"""What a field costs that reads nothing: scalars, and objects already read with their parent."""

FIELD_COSTS: Mapping[str, FieldCost] = {
    # Reads
    "Query.player": FieldCost(reads=1),
    "Query.players": FieldCost(reads=1, size=_ids("ids")),
    "Query.playerByEmail": FieldCost(reads=1),
    "Query.leaderboard": FieldCost(reads=1),
    "Query.leaderboardFamily": FieldCost(reads=1),
    "Query.session": FieldCost(reads=1),
    "Query.gameSessions": FieldCost(reads=1, size=_first, items=_PAGE),
    "Query.moderationLog": FieldCost(reads=1, size=_first, items=_PAGE),
    # The closed boards' Query, and one Query of results for each board a page may reach
    "Query.resultFeed": FieldCost(reads=1, size=_first, items=_PAGE, per_item=1),
    "Player.entry": FieldCost(reads=1),
    "Player.bestScore": FieldCost(reads=1),
    "Player.scores": FieldCost(reads=1, size=_first, items=_PAGE),
    "Player.sessions": FieldCost(reads=1, size=_first, items=_PAGE),
    "Player.results": FieldCost(reads=1, size=_first, items=_PAGE),
    "Player.rank": FieldCost(reads=RANK),
    "Player.ranks": FieldCost(size=_ids("leaderboardIds"), per_item=RANK),
    "Leaderboard.family": FieldCost(reads=1),
    "Leaderboard.topScores": FieldCost(reads=1, size=_first, items=_PAGE),
    "Leaderboard.rankOf": FieldCost(reads=RANK),
    "Leaderboard.ranksOf": FieldCost(reads=1, size=_ids("playerIds"), per_item=RANK),
    "Leaderboard.around": FieldCost(reads=2 + RANK, size=_around),
    "Leaderboard.finalStandings": FieldCost(reads=1, size=_first, items=_PAGE),
    "Leaderboard.finalResult": FieldCost(reads=1),
    "LeaderboardFamily.current": FieldCost(reads=1),
    "LeaderboardFamily.previous": FieldCost(reads=1),
    "LeaderboardFamily.board": FieldCost(reads=1),
    "LeaderboardFamily.partitions": FieldCost(reads=1),
    "Score.leaderboard": FieldCost(reads=1),
    "Score.player": FieldCost(reads=1),
    "Score.rank": FieldCost(reads=1),
    "Session.player": FieldCost(reads=1),
    "Rank.score": FieldCost(reads=1),
    "FinalResult.leaderboard": FieldCost(reads=1),
    "FinalResult.player": FieldCost(reads=1),
    "FinalResult.claim": FieldCost(reads=1),
    # Writes: the reads and the transaction of each
    "Mutation.createPlayer": FieldCost(reads=1),
    "Mutation.createLeaderboard": FieldCost(reads=1),
    "Mutation.createLeaderboardFamily": FieldCost(reads=2),
    "Mutation.updateLeaderboardFamily": FieldCost(reads=1),
    "Mutation.submitScore": FieldCost(reads=3),
    # The board, the result, the claim's transaction, and the first claim when it stood
    "Mutation.claimReward": FieldCost(reads=4),
    "SubmitScorePayload.rank": FieldCost(reads=RANK),
    "SubmitScorePayload.entries": FieldCost(size=lambda _: MAX_TARGETS),
    "BoardEntryResult.leaderboard": FieldCost(reads=1),
    "BoardEntryResult.rank": FieldCost(reads=RANK),
    # Live: each push re-reads the board's top
    "Mutation.removeEntry": FieldCost(reads=1),
    # A ban's and an erasure's work grows with the player's entries and sessions; the request's
    # budget of database calls bounds it (an erasure stops within it and is sent again)
    "Mutation.banPlayer": FieldCost(reads=10),
    "Mutation.unbanPlayer": FieldCost(reads=1),
    "Mutation.erasePlayer": FieldCost(reads=20),
    # A rename writes the name into each of the player's entries, within the same budget
    "Mutation.renamePlayer": FieldCost(reads=10),
    "Subscription.leaderboardChanged": FieldCost(reads=2, size=_subscribed, items=("entries",)),
    # Objects already read with their parent
    "ScoreConnection.edges": FREE,
    "ScoreConnection.pageInfo": FREE,
    "SessionConnection.edges": FREE,
    "SessionConnection.pageInfo": FREE,
    "ScoreEdge.node": FREE,
    "SessionEdge.node": FREE,
    "FinalResultConnection.edges": FREE,
    "FinalResultConnection.pageInfo": FREE,
    "FinalResultEdge.node": FREE,
    "CreatePlayerPayload.player": FREE,
    "CreatePlayerPayload.errors": FREE,
    "RenamePlayerPayload.player": FREE,
    "RenamePlayerPayload.errors": FREE,
    "CreateLeaderboardPayload.leaderboard": FREE,
    "CreateLeaderboardPayload.errors": FREE,
    "CreateLeaderboardFamilyPayload.family": FREE,
    "CreateLeaderboardFamilyPayload.errors": FREE,
    "UpdateLeaderboardFamilyPayload.family": FREE,
    "UpdateLeaderboardFamilyPayload.errors": FREE,
    "SubmitScorePayload.session": FREE,
    "SubmitScorePayload.score": FREE,
    "SubmitScorePayload.errors": FREE,
    "BoardEntryResult.score": FREE,
    "LeaderboardTop.entries": FREE,
    "LeaderboardTop.leaderboard": FREE,
    "Leaderboard.rewardTiers": FREE,
    "LeaderboardFamily.rewardTiers": FREE,
    "FinalResult.reward": FREE,
    "RewardClaim.reward": FREE,
    "ClaimRewardPayload.claim": FREE,
    "ClaimRewardPayload.errors": FREE,
    "ModerationActionConnection.edges": FREE,
    "ModerationActionConnection.pageInfo": FREE,
    "ModerationActionEdge.node": FREE,
    "ModerationAction.removed": FREE,
    "RemoveEntryPayload.removed": FREE,
    "RemoveEntryPayload.action": FREE,
    "RemoveEntryPayload.errors": FREE,
    "BanPlayerPayload.action": FREE,
    "BanPlayerPayload.errors": FREE,
    "UnbanPlayerPayload.action": FREE,
    "UnbanPlayerPayload.errors": FREE,
    "ErasePlayerPayload.erased": FREE,
    "ErasePlayerPayload.action": FREE,
    "ErasePlayerPayload.errors": FREE,
    "Player.moderation": FREE,
}
"""Every field of the schema that returns an object, by ``Type.field``; the other fields are
free. A test keeps the table complete."""
