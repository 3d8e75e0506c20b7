"""Resolve functions for sessions: one by key, and a game's sessions."""

from __future__ import annotations

from functools import partial

from dynamo import sessions
from dynamo.reads import Page
from dynamo.sessions import SessionItem
from resolvers.context import Context
from resolvers.erased import existing_players
from resolvers.inputs import clean_id, clean_session_id, page_of

__all__ = ["resolve_game_sessions", "resolve_session"]


async def resolve_session(ctx: Context, player_id: str, session_id: str) -> SessionItem | None:
    key = (clean_id(player_id, "playerId"), clean_session_id(session_id))
    return await ctx.loaders.session.load(key)


async def resolve_game_sessions(
    ctx: Context, game_id: str, first: int | None, after: str | None, *, with_players: bool = False
) -> Page[SessionItem]:
    """A page of the game's sessions, newest first; ``with_players``: their players are read
    before returning, and the sessions whose player was erased meanwhile left out (see
    resolvers/erased.py)."""
    game = clean_id(game_id, "gameId")
    page = await page_of(partial(sessions.game_sessions, ctx.db, game), first, after)
    for session in page.items:
        ctx.loaders.session.prime((session.player_id, session.session_id), session)
    if with_players:
        page = page.keeping(await existing_players(ctx, [s.player_id for s in page.items]))
    return page
