"""Score items: AP3 (top N), AP4 (a player's best), AP5 (a player's boards).

A board's entries are its Score items (keys declared below). ``rank_value`` is the score
zero-padded to the board's width, or ``10^width - 1 - score`` on a board where lower is
better, so that "better" is always "larger rank_value". ``tie_value`` is ``9999999999999 -
attainedAt`` in epoch milliseconds, padded to 13 digits, so that among equal scores the
earlier one sorts first in a descending read.

A board of one partition (``partitions`` 1, the default) keeps its Score items under its own
partition key, ``LEADERBOARD#<id>`` (SCORE). A write-sharded board (``partitions`` N, a power
of two up to 64) spreads them over N partition keys, ``LEADERBOARD#<id>#<shard>`` with shard
``00`` to N - 1 (PARTITIONED_SCORE), a player's shard chosen by the stable hash of its id
(:func:`dynamo.leaderboards.player_partition`), under which its count shard is kept too
(dynamo/leaderboards.py): each partition key takes its own ~1,000 write units a second. The
sort keys are the same in either layout, so the board's order (best first, ties earlier
first, then by player id) is the descending order of the sort keys across all its partitions,
and a read of the whole board merges its partitions on them (:func:`top_scores`;
dynamo/ranks.py for ranks and windows).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from dynamo.db import Db
from dynamo.items import Item, parse, serialize
from dynamo.keys import Entity
from dynamo.leaderboards import LeaderboardItem, SortOrder, player_partition
from dynamo.merged_reads import merged_page
from dynamo.metadata import Metadata
from dynamo.reads import Page, index_page, range_page
from dynamo.table import GSI1

__all__ = [
    "PARTITIONED_SCORE",
    "SCORE",
    "SCORE_RANGE_END",
    "ScoreItem",
    "attained_at_of",
    "holds_score",
    "player_entry",
    "player_scores",
    "rank_boundary",
    "rank_value",
    "score_entity",
    "score_item",
    "score_partition",
    "score_partitions",
    "score_player",
    "score_sk",
    "score_values",
    "sort_values",
    "tie_value",
    "top_scores",
    "top_scores_after",
]

SCORE = Entity.declare(
    "Score",
    pk="LEADERBOARD#{leaderboard_id}",
    sk="SCORE#{rank_value}#{tie_value}#{player_id}",
    gsi1=("PLAYER#{player_id}", "SCORE#{leaderboard_id}"),
)
PARTITIONED_SCORE = Entity.declare(
    "Score (write-sharded board)",
    pk="LEADERBOARD#{leaderboard_id}#{shard}",
    sk="SCORE#{rank_value}#{tie_value}#{player_id}",
    gsi1=("PLAYER#{player_id}", "SCORE#{leaderboard_id}"),
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TIE_MAX = 9_999_999_999_999
_TIE_WIDTH = 13
SCORE_RANGE_END = SCORE.sk.prefix.removesuffix("#") + "$"
"""Sorts after every ``SCORE#...`` sort key: the upper bound of the score range."""


def rank_boundary(value: str) -> str:
    """The sort key between the Score items of rank value ``value`` and those of a larger one:
    ``SCORE#<value>$`` sorts after every key of ``value`` ('$' follows '#') and before every
    key of a larger value."""
    return f"{SCORE.sk.prefix}{value}$"


class ScoreItem(Item):
    leaderboard_id: str
    player_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None
    ttl: int | None = None
    """Set on the entries of periodic boards, which expire with their board."""
    version: int = 0
    """The entry guard's version when this item was written (see dynamo.entry_guards)."""
    metadata: Metadata | None = None
    """The metadata of the play that attained the entry (see dynamo.metadata)."""
    player_name: str | None = None
    """The player's name as of ``player_name_version``: written by the play that writes the
    item, and by a rename (dynamo/renames.py), so that a page of entries shows its players'
    names without reading their items. None on an item written before entries held names
    (then the name is read from the Player item)."""
    player_name_version: int | None = None
    """The Player item's ``nameVersion`` the name is of (None for 0: the name it was created
    with); a rename writes only items holding an older one."""


def rank_value(score: int, width: int, order: SortOrder) -> str:
    """The fixed-width sort string of ``score``; larger always means better."""
    value = score if order is SortOrder.DESC else 10**width - 1 - score
    return str(value).zfill(width)


def tie_value(attained_at: datetime) -> str:
    millis = (attained_at - _EPOCH) // timedelta(milliseconds=1)
    return str(_TIE_MAX - millis).zfill(_TIE_WIDTH)


def attained_at_of(tie: str) -> datetime:
    """The instant a ``tieValue`` encodes (the inverse of :func:`tie_value`)."""
    return _EPOCH + timedelta(milliseconds=_TIE_MAX - int(tie))


def sort_values(board: LeaderboardItem, entry: ScoreItem) -> dict[str, str]:
    """The values the Score item's sort key derives from the board: ``rank_value`` and
    ``tie_value`` (``SCORE.item(entry, **sort_values(board, entry))``)."""
    return {
        "rank_value": rank_value(entry.score, board.score_width, board.sort_order),
        "tie_value": tie_value(entry.attained_at),
    }


def score_sk(board: LeaderboardItem, entry: ScoreItem) -> str:
    """The sort key of ``entry``'s Score item on ``board``."""
    return SCORE.sk.fill(player_id=entry.player_id, **sort_values(board, entry))


def holds_score(item: Mapping[str, Any]) -> bool:
    """Whether a stored item (or a key) is a Score item, of a board of either layout."""
    return SCORE.holds(item) or PARTITIONED_SCORE.holds(item)


def _shard(board: LeaderboardItem, player_id: str) -> str:
    return player_partition(player_id, board.partitions)


def score_entity(board: LeaderboardItem) -> Entity:
    """The entity of ``board``'s Score items: SCORE, or PARTITIONED_SCORE on a write-sharded
    board."""
    return SCORE if board.partitions == 1 else PARTITIONED_SCORE


def score_partition(board: LeaderboardItem, player_id: str) -> str:
    """The partition key of the player's Score item on ``board``."""
    if board.partitions == 1:
        return SCORE.pk.fill(leaderboard_id=board.leaderboard_id)
    shard = _shard(board, player_id)
    return PARTITIONED_SCORE.pk.fill(leaderboard_id=board.leaderboard_id, shard=shard)


def score_partitions(board: LeaderboardItem) -> list[str]:
    """Every partition key of ``board``'s Score items, in shard order."""
    if board.partitions == 1:
        return [SCORE.pk.fill(leaderboard_id=board.leaderboard_id)]
    return [
        PARTITIONED_SCORE.pk.fill(leaderboard_id=board.leaderboard_id, shard=f"{n:02d}")
        for n in range(board.partitions)
    ]


def score_player(raw: Mapping[str, Any]) -> str:
    """The player of a stored Score item."""
    player: str = raw["playerId"]["S"]
    return player


def score_values(board: LeaderboardItem, entry: ScoreItem) -> dict[str, str]:
    """Every value the Score item's keys derive from the board: :func:`sort_values`, and on a
    write-sharded board the player's ``shard``."""
    values = sort_values(board, entry)
    if board.partitions > 1:
        values["shard"] = _shard(board, entry.player_id)
    return values


def score_item(board: LeaderboardItem, entry: ScoreItem) -> dict[str, Any]:
    """``entry``'s Score item on ``board``, with all its keys."""
    return score_entity(board).item(entry, **score_values(board, entry))


async def top_scores(
    db: Db, board: LeaderboardItem, first: int, after: str | None, *, consistent: bool = False
) -> Page[ScoreItem]:
    """AP3: the board's SCORE# range read descending, best first; ``consistent``: with
    ConsistentRead (it then shows every write that had committed when it began). On a
    write-sharded board, one Query per partition, merged (see dynamo/merged_reads.py); its
    cursors are bound to the board and its number of partitions."""
    if board.partitions == 1:
        return await range_page(
            db,
            ScoreItem,
            SCORE.pk.fill(leaderboard_id=board.leaderboard_id),
            SCORE.sk.prefix,
            first,
            after,
            consistent=consistent,
        )
    return await merged_page(
        db,
        ScoreItem,
        score_partitions(board),
        SCORE.sk.prefix,
        first,
        after,
        bound={
            "pk": SCORE.pk.fill(leaderboard_id=board.leaderboard_id),
            "partitions": str(board.partitions),
        },
        identity=score_player,
        consistent=consistent,
    )


async def top_scores_after(
    db: Db, board: LeaderboardItem, first: int, after_sk: str | None
) -> tuple[list[ScoreItem], str | None, bool]:
    """AP3 read with ConsistentRead from below the entry of sort key ``after_sk`` (from the
    top when None), as a page of :func:`top_scores` resumes: the entries, the sort key of the
    last of them (None for none), and whether more follow. For readers that keep where they
    stopped in the table (dynamo/closing.py) rather than in a client's cursor."""
    after = None
    if after_sk is not None:
        bound = {"pk": SCORE.pk.fill(leaderboard_id=board.leaderboard_id)}
        if board.partitions > 1:
            bound["partitions"] = str(board.partitions)
        after = db.cursors.encode({**bound, "sk": after_sk})
    page = await top_scores(db, board, first, after, consistent=True)
    last = score_sk(board, page.items[-1]) if page.items else None
    return page.items, last, page.has_next


async def player_entry(db: Db, player_id: str, leaderboard_id: str) -> ScoreItem | None:
    """AP4: Query GSI1 for the player's entry on the board (its single Score item)."""
    response = await db.query(
        TableName=db.table,
        IndexName=GSI1,
        KeyConditionExpression="gsi1pk = :pk AND gsi1sk = :sk",
        ExpressionAttributeValues=serialize(
            dict(
                zip(
                    (":pk", ":sk"),
                    SCORE.index_key(GSI1, player_id=player_id, leaderboard_id=leaderboard_id),
                    strict=True,
                )
            )
        ),
        Limit=1,
    )
    items = response.get("Items", [])
    return parse(ScoreItem, items[0]) if items else None


async def player_scores(db: Db, player_id: str, first: int, after: str | None) -> Page[ScoreItem]:
    """AP5: every board entry of the player, ordered by board id."""
    return await index_page(
        db, ScoreItem, SCORE, GSI1, first, after, descending=False, player_id=player_id
    )
