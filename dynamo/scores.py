"""Score items: AP3 (top N), AP4 (a player's best), AP5 (a player's boards), AP10 (rank).

Keys::

    Score   pk = LEADERBOARD#<leaderboardId>   sk = SCORE#<rankValue>#<tieValue>#<playerId>
            gsi1pk = PLAYER#<playerId>         gsi1sk = SCORE#<leaderboardId>

``rankValue`` is the score zero-padded to the board's width, or ``10^width - 1 - score`` on a
board where lower is better, so that "better" is always "larger rankValue". ``tieValue`` is
``9999999999999 - attainedAt`` in epoch milliseconds, padded to 13 digits, so that among equal
scores the earlier one sorts first in a descending read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dynamo.cursors import CursorShape
from dynamo.leaderboards import LeaderboardItem, SortOrder
from dynamo.table import GSI1, Db, Item, Page, count, parse, query_page, serialize

__all__ = [
    "ScoreItem",
    "best_score",
    "best_scores",
    "count_better",
    "player_scores",
    "rank_value",
    "score_keys",
    "score_sk",
    "tie_value",
    "top_scores",
]

PK = "LEADERBOARD#{leaderboard_id}"
SK = "SCORE#{rank_value}#{tie_value}#{player_id}"
SK_PREFIX = "SCORE#"
GSI1PK = "PLAYER#{player_id}"
GSI1SK = "SCORE#{leaderboard_id}"

_TIE_MAX = 9_999_999_999_999
_TIE_WIDTH = 13
# Sorts after every "SCORE#..." sort key: the upper bound of the score range.
_SCORE_RANGE_END = "SCORE$"


class ScoreItem(Item):
    leaderboard_id: str
    player_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None


def rank_value(score: int, width: int, order: SortOrder) -> str:
    """The fixed-width sort string of ``score``; larger always means better."""
    value = score if order is SortOrder.DESC else 10**width - 1 - score
    return str(value).zfill(width)


def tie_value(attained_at: datetime) -> str:
    millis = int(attained_at.timestamp() * 1000)
    return str(_TIE_MAX - millis).zfill(_TIE_WIDTH)


def score_sk(board: LeaderboardItem, player_id: str, score: int, attained_at: datetime) -> str:
    return SK.format(
        rank_value=rank_value(score, board.score_width, board.sort_order),
        tie_value=tie_value(attained_at),
        player_id=player_id,
    )


def score_keys(board: LeaderboardItem, entry: ScoreItem) -> dict[str, str]:
    """All four key attributes of the Score item for ``entry`` on ``board``."""
    return {
        "pk": PK.format(leaderboard_id=board.leaderboard_id),
        "sk": score_sk(board, entry.player_id, entry.score, entry.attained_at),
        "gsi1pk": GSI1PK.format(player_id=entry.player_id),
        "gsi1sk": GSI1SK.format(leaderboard_id=board.leaderboard_id),
    }


async def top_scores(db: Db, leaderboard_id: str, first: int, after: str | None) -> Page[ScoreItem]:
    """AP3: the board's SCORE# range read descending, best first."""
    pk = PK.format(leaderboard_id=leaderboard_id)
    return await query_page(
        db,
        ScoreItem,
        key_condition="pk = :pk AND begins_with(sk, :prefix)",
        values={":pk": pk, ":prefix": SK_PREFIX},
        cursor_shape=CursorShape(exact={"pk": pk}, prefixes={"sk": SK_PREFIX}),
        first=first,
        after=after,
    )


async def best_score(db: Db, player_id: str, leaderboard_id: str) -> ScoreItem | None:
    """AP4: Query GSI1 for the player's single Score item on the board."""
    response = await db.client.query(
        TableName=db.table,
        IndexName=GSI1,
        KeyConditionExpression="gsi1pk = :pk AND gsi1sk = :sk",
        ExpressionAttributeValues=serialize(
            {
                ":pk": GSI1PK.format(player_id=player_id),
                ":sk": GSI1SK.format(leaderboard_id=leaderboard_id),
            }
        ),
        Limit=1,
    )
    items = response.get("Items", [])
    return parse(ScoreItem, items[0]) if items else None


async def best_scores(db: Db, pairs: Sequence[tuple[str, str]]) -> list[ScoreItem | None]:
    """AP4 for several (playerId, leaderboardId) pairs, the Queries running concurrently."""
    return list(await asyncio.gather(*(best_score(db, p, b) for p, b in pairs)))


async def player_scores(db: Db, player_id: str, first: int, after: str | None) -> Page[ScoreItem]:
    """AP5: every board entry of the player, ordered by board id."""
    gsi1pk = GSI1PK.format(player_id=player_id)
    return await query_page(
        db,
        ScoreItem,
        key_condition="gsi1pk = :pk AND begins_with(gsi1sk, :prefix)",
        values={":pk": gsi1pk, ":prefix": SK_PREFIX},
        cursor_shape=CursorShape(
            exact={"gsi1pk": gsi1pk},
            prefixes={"gsi1sk": SK_PREFIX, "pk": "LEADERBOARD#", "sk": SK_PREFIX},
        ),
        first=first,
        after=after,
        index=GSI1,
        descending=False,
    )


async def count_better(db: Db, board: LeaderboardItem, entry: ScoreItem) -> int:
    """AP10: how many entries on the board have a strictly better score than ``entry``.

    A COUNT Query over the sort keys above ``SCORE#<rankValue>`` (every tie value of the same
    rank value excluded), paged through LastEvaluatedKey to the end.
    """
    own = rank_value(entry.score, board.score_width, board.sort_order)
    values: dict[str, Any] = {
        ":pk": PK.format(leaderboard_id=board.leaderboard_id),
        ":lo": f"{SK_PREFIX}{own}$",
        ":hi": _SCORE_RANGE_END,
    }
    return await count(db, key_condition="pk = :pk AND sk BETWEEN :lo AND :hi", values=values)
