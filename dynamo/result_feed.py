"""The results feed: every final result, board after board in the order the boards closed,
each board's in its order, for a game server that pulls them and resumes where it stopped.

A board enters GSI2's ``CLOSED_BOARDS`` partition when its close makes it final
(dynamo/closing.py), and its results are read from GSI2's ``RESULTS#<leaderboardId>``
partition (dynamo/results.py). Both are index reads, eventually consistent, and the index
copies of two items are not ordered: the feed shows a board only ``SETTLE`` after it closed,
by when both are in the index (DynamoDB propagates an index write within a second or so), so a
page never shows a board with results missing. A page's cursor holds the board it ended in
and the position it ended at; the next page goes on from the next result of that board, or
from the next board. Boards that closed with no entrant have no result and are passed over.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dynamo.cursors import CursorShape
from dynamo.db import Db
from dynamo.leaderboards import LEADERBOARD, close_due
from dynamo.reads import query_run
from dynamo.results import POSITION_DIGITS, RESULT, ResultItem, board_results
from dynamo.table import GSI2

__all__ = ["SETTLE", "FeedPage", "result_feed"]

SETTLE = timedelta(seconds=10)
"""How long after its close a board enters the feed."""
_BOARDS_A_READ = 25

_IPK, _ISK = LEADERBOARD.indexes[GSI2]
_SHAPE = CursorShape(
    exact={"gsi2pk": _IPK.fill()}, prefixes={"gsi2sk": "", "position": "", "player": ""}
)


@dataclass(frozen=True)
class FeedPage:
    """Results in feed order, the cursor after each, and whether more stood at the read."""

    items: list[ResultItem]
    cursors: list[str]
    has_next: bool

    @property
    def end_cursor(self) -> str | None:
        return self.cursors[-1] if self.cursors else None


async def result_feed(db: Db, first: int, after: str | None, *, at: datetime) -> FeedPage:
    """Up to ``first`` results from ``after`` on (from the first board that closed when
    None), of boards that closed ``SETTLE`` or more before ``at``."""
    board_key, position, player = None, 0, ""
    if after is not None:
        found = db.cursors.decode(after, _SHAPE)
        board_key, player = found["gsi2sk"], found["player"]
        position = int(found["position"]) if found["position"].isdigit() else 0
    items: list[ResultItem] = []
    cursors: list[str] = []
    boards = _closed_boards(db, board_key, at - SETTLE)
    async for sk, board_id in boards:
        if sk != board_key:
            position = 0
        while len(items) < first + 1:
            wanted = first + 1 - len(items)
            start = None if position == 0 else _results_cursor(db, board_id, position, player)
            page = await board_results(db, board_id, wanted, start)
            for result in page.items:
                items.append(result)
                cursors.append(
                    db.cursors.encode(
                        {
                            **_SHAPE.exact,
                            "gsi2sk": sk,
                            "position": str(result.position),
                            "player": result.player_id,
                        }
                    )
                )
                position, player = result.position, result.player_id
            if not page.has_next:
                break
        if len(items) > first:
            break
    return FeedPage(items[:first], cursors[:first], has_next=len(items) > first)


async def _closed_boards(db: Db, after: str | None, before: datetime) -> Any:
    """(GSI2 sort key, board id) of the boards closed before ``before``, in close order,
    from the board ``after`` names (included) on."""
    start: dict[str, str] | None = None
    values: dict[str, Any] = {":pk": _IPK.fill(), ":low": after or "0", ":high": close_due(before)}
    while True:
        raw, start = await query_run(
            db,
            key_condition="gsi2pk = :pk AND gsi2sk BETWEEN :low AND :high",
            values=values,
            limit=_BOARDS_A_READ,
            index=GSI2,
            descending=False,
            start=start,
        )
        for item in raw:
            yield item["gsi2sk"]["S"], item["leaderboardId"]["S"]
        if start is None:
            return


def _results_cursor(db: Db, board_id: str, position: int, player_id: str) -> str:
    """A cursor of the board's standings that resumes after the result of ``player_id`` at
    ``position``."""
    ipk, isk = RESULT.indexes[GSI2]
    return db.cursors.encode(
        {
            "gsi2pk": ipk.fill(leaderboard_id=board_id),
            "gsi2sk": isk.fill(position_key=f"{position:0{POSITION_DIGITS}d}"),
            **RESULT.key_attributes(player_id=player_id, leaderboard_id=board_id),
        }
    )
