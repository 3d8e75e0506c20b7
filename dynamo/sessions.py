"""Session items: AP6 (a player's sessions), AP7 (a game's sessions), AP8 (one session).

The keys are declared below. ``session_id`` is a ULID, so both ranges read descending are newest
first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dynamo.cursors import CursorShape
from dynamo.db import Db
from dynamo.items import Item
from dynamo.keys import Entity
from dynamo.metadata import Metadata
from dynamo.reads import Page, get_items, query_page, range_page
from dynamo.table import GSI2

__all__ = [
    "SESSION",
    "SessionItem",
    "game_sessions",
    "get_sessions",
    "player_sessions",
]

SESSION = Entity.declare(
    "Session",
    pk="PLAYER#{player_id}",
    sk="SESSION#{session_id}",
    gsi2=("GAME#{game_id}", "SESSION#{session_id}"),
)


class SessionItem(Item):
    session_id: str
    player_id: str
    game_id: str
    score: int
    duration_sec: int | None = None
    played_at: datetime
    leaderboard_id: str | None = None
    """The first board the play was submitted to."""
    leaderboard_ids: list[str] = []
    """Every board the play was submitted to."""
    submission_id: str | None = None
    metadata: Metadata | None = None
    """The play's metadata (see dynamo.metadata)."""


async def get_sessions(db: Db, keys: Sequence[tuple[str, str]]) -> list[SessionItem | None]:
    """AP8 batched over (playerId, sessionId) pairs: one result per pair, None where missing."""
    return await get_items(
        db, SessionItem, [SESSION.key(player_id=p, session_id=s) for p, s in keys]
    )


async def player_sessions(
    db: Db, player_id: str, first: int, after: str | None
) -> Page[SessionItem]:
    """AP6: the player's sessions, newest first."""
    return await range_page(
        db, SessionItem, SESSION.pk.fill(player_id=player_id), SESSION.sk.prefix, first, after
    )


async def game_sessions(db: Db, game_id: str, first: int, after: str | None) -> Page[SessionItem]:
    """AP7: every player's sessions of one game, newest first, from GSI2."""
    gsi2pk, gsi2sk = SESSION.indexes[GSI2]
    pk = gsi2pk.fill(game_id=game_id)
    return await query_page(
        db,
        SessionItem,
        key_condition="gsi2pk = :pk",
        values={":pk": pk},
        cursor_shape=CursorShape(
            exact={"gsi2pk": pk},
            prefixes={"gsi2sk": gsi2sk.prefix, "pk": SESSION.pk.prefix, "sk": SESSION.sk.prefix},
        ),
        first=first,
        after=after,
        index=GSI2,
    )
