"""Session items: AP6 (a player's sessions), AP7 (a game's sessions), AP8 (one session).

Keys::

    Session   pk = PLAYER#<playerId>     sk = SESSION#<sessionId>
              gsi2pk = GAME#<gameId>     gsi2sk = SESSION#<sessionId>

``sessionId`` is a ULID, so both ranges read descending are newest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dynamo.cursors import CursorShape
from dynamo.table import GSI2, Db, Item, Key, Page, batch_get, parse, query_page

__all__ = [
    "SessionItem",
    "game_sessions",
    "get_sessions",
    "player_sessions",
    "session_key",
    "session_keys",
]

PK = "PLAYER#{player_id}"
SK = "SESSION#{session_id}"
SK_PREFIX = "SESSION#"
GSI2PK = "GAME#{game_id}"
GSI2SK = "SESSION#{session_id}"


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


def session_key(player_id: str, session_id: str) -> Key:
    return (PK.format(player_id=player_id), SK.format(session_id=session_id))


def session_keys(session: SessionItem) -> dict[str, str]:
    """All four key attributes of the Session item."""
    pk, sk = session_key(session.player_id, session.session_id)
    return {
        "pk": pk,
        "sk": sk,
        "gsi2pk": GSI2PK.format(game_id=session.game_id),
        "gsi2sk": GSI2SK.format(session_id=session.session_id),
    }


async def get_sessions(db: Db, keys: Sequence[tuple[str, str]]) -> list[SessionItem | None]:
    """AP8 batched over (playerId, sessionId) pairs: one result per pair, None where missing."""
    table_keys = [session_key(p, s) for p, s in keys]
    found = await batch_get(db, table_keys)
    return [parse(SessionItem, found[k]) if k in found else None for k in table_keys]


async def player_sessions(
    db: Db, player_id: str, first: int, after: str | None
) -> Page[SessionItem]:
    """AP6: the player's sessions, newest first."""
    pk = PK.format(player_id=player_id)
    return await query_page(
        db,
        SessionItem,
        key_condition="pk = :pk AND begins_with(sk, :prefix)",
        values={":pk": pk, ":prefix": SK_PREFIX},
        cursor_shape=CursorShape(exact={"pk": pk}, prefixes={"sk": SK_PREFIX}),
        first=first,
        after=after,
    )


async def game_sessions(db: Db, game_id: str, first: int, after: str | None) -> Page[SessionItem]:
    """AP7: every player's sessions of one game, newest first, from GSI2."""
    gsi2pk = GSI2PK.format(game_id=game_id)
    return await query_page(
        db,
        SessionItem,
        key_condition="gsi2pk = :pk",
        values={":pk": gsi2pk},
        cursor_shape=CursorShape(
            exact={"gsi2pk": gsi2pk},
            prefixes={"gsi2sk": SK_PREFIX, "pk": "PLAYER#", "sk": SK_PREFIX},
        ),
        first=first,
        after=after,
        index=GSI2,
    )
