"""Final results: each entrant's standing on a board once its close has frozen it.

A board's close (dynamo/closing.py) writes one Result item per entrant, under the player's own
partition, beside its entry guard, so that one player's result is one GetItem and an erasure
of the player, which deletes its partition, takes its results with it. Two sparse index keys
order them:

- GSI1 ``PLAYER#<playerId>`` / ``RESULT#<endsAt>#<leaderboardId>``: a player's results, newest
  period first (``Player.results``), beside its Score items' ``SCORE#`` keys there;
- GSI2 ``RESULTS#<leaderboardId>`` / ``POSITION#<position>``: a board's final standings in the
  board's order (``Leaderboard.finalStandings``).

A result holds the entry as it was frozen (score, when it was attained, its session and
metadata), its place in the board's order (``position``, 1 to ``total``), its rank (standard
competition ranking: 1 + the entrants with a strictly better score, so ties share a rank, the
earlier attainment listed first) and the total of entrants. Results are written once, the
same whichever close writes them, and expire ``archiveDays`` after the board's end (never, by
default), whatever the live board's ``ttl``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from dynamo.db import Db
from dynamo.items import Item, parse
from dynamo.keys import Entity
from dynamo.metadata import Metadata
from dynamo.reads import Page, get_items, index_page, query_items
from dynamo.table import GSI1, GSI2

__all__ = [
    "POSITION_DIGITS",
    "RESULT",
    "ResultItem",
    "board_results",
    "get_results",
    "player_results",
    "result_keys",
    "results_around",
]

RESULT = Entity.declare(
    "Final result",
    pk="PLAYER#{player_id}",
    sk="RESULT#{leaderboard_id}",
    gsi1=("PLAYER#{player_id}", "RESULT#{ends_key}#{leaderboard_id}"),
    gsi2=("RESULTS#{leaderboard_id}", "POSITION#{position_key}"),
)

POSITION_DIGITS = 10
"""Digits of a result's position in its GSI2 sort key: more than any board's entrants."""


class ResultItem(Item):
    leaderboard_id: str
    player_id: str
    position: int
    """The entry's place in the board's final order, 1 to ``total``: ties in the order the
    board lists them (the earlier attainment first)."""
    rank: int
    """1 + the number of entrants with a strictly better score."""
    total: int
    """The entrants of the final standings."""
    score: int
    attained_at: datetime
    session_id: str | None = None
    metadata: Metadata | None = None
    ends_at: datetime
    """The board's ``endsAt``: orders a player's results, newest period first."""
    ttl: int | None = None
    """Epoch seconds: ``archiveDays`` after the board's end; None to keep it for ever."""
    tier: int | None = None
    """The index of the board's reward tier the result is in (dynamo/rewards.py); None for
    none."""
    reward_id: str | None = None
    reward_quantity: int | None = None

    @property
    def percentile(self) -> float:
        """The share of the entrants this result is ahead of or tied with, itself included:
        100 * (total - (rank - 1)) / total (as ``Rank.percentile``)."""
        return 100.0 * (self.total - (self.rank - 1)) / self.total

    def index_values(self) -> dict[str, str]:
        """The values the index templates take beyond the item's attributes."""
        return {
            "ends_key": f"{int(self.ends_at.timestamp() * 1000):013d}",
            "position_key": f"{self.position:0{POSITION_DIGITS}d}",
        }


def result_keys(leaderboard_id: str, player_ids: Sequence[str]) -> list[tuple[str, str]]:
    return [RESULT.key(player_id=p, leaderboard_id=leaderboard_id) for p in player_ids]


async def get_results(
    db: Db, pairs: Sequence[tuple[str, str]], *, consistent: bool = False
) -> list[ResultItem | None]:
    """Results by (playerId, leaderboardId): one per pair, in order, None where the player
    has none (the board is not final, the player had no entry, or was erased)."""
    keys = [RESULT.key(player_id=p, leaderboard_id=b) for p, b in pairs]
    return await get_items(db, ResultItem, keys, consistent=consistent)


async def board_results(
    db: Db, leaderboard_id: str, first: int, after: str | None
) -> Page[ResultItem]:
    """A board's final standings from ``after`` on, in the board's order (GSI2, eventually
    consistent: the close makes the board FINAL only once every result is written)."""
    return await index_page(
        db, ResultItem, RESULT, GSI2, first, after, descending=False, leaderboard_id=leaderboard_id
    )


async def player_results(db: Db, player_id: str, first: int, after: str | None) -> Page[ResultItem]:
    """A player's results on every final board, newest period first (GSI1)."""
    return await index_page(
        db, ResultItem, RESULT, GSI1, first, after, descending=True, player_id=player_id
    )


async def results_around(
    db: Db, result: ResultItem, before: int, after: int
) -> tuple[list[ResultItem], list[ResultItem]]:
    """Up to ``before`` results listed before ``result`` in its board's final standings
    (nearest last) and up to ``after`` listed after it (nearest first): GSI2, one Query each
    way, both at once (none for a side of 0)."""
    pk, sk = RESULT.index_key(GSI2, leaderboard_id=result.leaderboard_id, **result.index_values())

    async def side(count: int, condition: str, descending: bool) -> list[ResultItem]:
        if count == 0:
            return []
        raw = await query_items(
            db,
            key_condition=f"gsi2pk = :pk AND gsi2sk {condition} :sk",
            values={":pk": pk, ":sk": sk},
            limit=count,
            index=GSI2,
            descending=descending,
        )
        return [parse(ResultItem, item) for item in raw]

    above, below = await asyncio.gather(side(before, "<", True), side(after, ">", False))
    return above[::-1], below
