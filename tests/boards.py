"""Writing a whole board at once, exactly as submissions would leave it (tests only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD, guard_for
from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem, Period, SortOrder, close_due
from dynamo.players import PLAYER, PlayerItem
from dynamo.scores import ScoreItem, rank_value, score_item

T0 = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Entry:
    player_id: str
    score: int
    attained_at: datetime


async def write_items(db: Db, items: list[dict[str, Any]]) -> None:
    for i in range(0, len(items), 25):
        request: Any = {
            db.table: [{"PutRequest": {"Item": serialize(it)}} for it in items[i : i + 25]]
        }
        while request:
            response = await db.client.batch_write_item(RequestItems=request)
            request = response.get("UnprocessedItems") or {}


async def write_board(
    db: Db,
    board_id: str,
    scores: list[int],
    order: SortOrder = SortOrder.DESC,
    *,
    partitions: int = 1,
    attained: Sequence[datetime] | None = None,
    guards: bool = True,
    players: bool = True,
    ends_at: datetime | None = None,
) -> tuple[LeaderboardItem, list[Entry]]:
    """A board of ``partitions`` partitions whose player ``p<i>`` attained ``scores[i]`` at
    ``attained[i]``, by default T0 + i seconds. Each entry comes with its entry guard unless
    ``guards`` is false (a test that only reads the board needs none), and each player's item
    is written unless ``players`` is false (another board of the test wrote them). A board
    given ``ends_at`` awaits its close from then (dynamo/closing.py)."""
    board = LeaderboardItem(
        leaderboard_id=board_id,
        name=board_id,
        period=Period.GLOBAL,
        sort_order=order,
        entry_count=len(scores),
        partitions=partitions,
        created_at=T0,
        ends_at=ends_at,
        close_due=close_due(ends_at) if ends_at is not None else None,
    )
    at = attained or [T0 + timedelta(seconds=i) for i in range(len(scores))]
    entries = [Entry(f"p{i:03d}", s, at[i]) for i, s in enumerate(scores)]
    items: list[dict[str, Any]] = []
    items.append(LEADERBOARD.item(board))
    for e in entries:
        score = ScoreItem(
            leaderboard_id=board_id, player_id=e.player_id, score=e.score, attained_at=e.attained_at
        )
        items.append(score_item(board, score))
        if guards:
            items.append(ENTRY_GUARD.item(guard_for(board, score, version=0)))
        if not players:
            continue
        player = PlayerItem(
            player_id=e.player_id,
            name=f"Player {e.player_id}",
            email=f"{e.player_id}@x.example",
            created_at=T0,
            updated_at=T0,
        )
        items.append(PLAYER.item(player))
    await write_items(db, items)
    return board, entries


def oracle(board: LeaderboardItem, entries: list[Entry]) -> list[tuple[str, int, int]]:
    """(player, score, rank) in board order, by brute force."""

    def value(e: Entry) -> str:
        return rank_value(e.score, board.score_width, board.sort_order)

    ordered = sorted(entries, key=lambda e: (value(e), -e.attained_at.timestamp()), reverse=True)
    return [
        (e.player_id, e.score, 1 + sum(1 for o in entries if value(o) > value(e))) for e in ordered
    ]
