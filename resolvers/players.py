"""Resolve functions for players: lookups, their boards, sessions and ranks, creation and
renames."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import Any

from dynamo import players, renames, results, scores, sessions
from dynamo.emails import legacy_email
from dynamo.errors import Subject
from dynamo.ids import ID_PATTERN, new_session_id
from dynamo.players import PlayerItem
from dynamo.reads import Page
from dynamo.renames import RenameResult
from dynamo.results import ResultItem
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem
from resolvers.changes import writing
from resolvers.context import Context
from resolvers.inputs import (
    MAX_IDS,
    clean_email,
    clean_id,
    clean_id_list,
    clean_name,
    naming,
    page_of,
)
from resolvers.loaders import RankInfo

__all__ = [
    "AskedRanks",
    "Entrant",
    "create_player",
    "rename_player",
    "resolve_entry",
    "resolve_player",
    "resolve_player_by_email",
    "resolve_player_results",
    "resolve_player_scores",
    "resolve_player_sessions",
    "resolve_players",
    "resolve_rank",
    "resolve_ranks",
]


@dataclass(frozen=True)
class Entrant:
    """A player known to exist because it holds an entry on a board; its item was not read."""

    player_id: str


@dataclass(frozen=True)
class AskedRanks:
    """What a client asks of a player's ranks: the boards, and whether ranks (and the id) are
    all it asks of the player."""

    boards: tuple[str, ...] = ()
    only: bool = False


async def resolve_player(
    ctx: Context, player_id: str, ranks: AskedRanks = AskedRanks()
) -> PlayerItem | Entrant | None:
    """A player by id (AP1), its asked ranks looked up while it is read.

    When ranks are all a client asks of the player, they are looked up first, and a rank
    means an entry: an entry is written only in the transaction that updates its player, and
    players are never deleted, so the player exists and its item is not read. With the rank
    index in sync the request then reads nothing from the table. Without a rank, the player
    is read to tell an unknown id."""
    player = clean_id(player_id, "id")
    # Invalid board ids and oversized lists are left to their own fields to report.
    boards = list(dict.fromkeys(b for b in ranks.boards if ID_PATTERN.fullmatch(b)))
    if not 0 < len(boards) <= MAX_IDS:
        return await ctx.loaders.player.load(player)
    pending = [ctx.loaders.rank.load((player, b)) for b in boards]
    for rank in pending:
        # Their fields await them and report their errors; an unknown player has none.
        rank.add_done_callback(_retrieved)
    if ranks.only:
        found = await asyncio.gather(*pending, return_exceptions=True)
        if any(isinstance(r, RankInfo) for r in found):
            return Entrant(player)
    return await ctx.loaders.player.load(player)


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def resolve_players(ctx: Context, player_ids: list[str]) -> list[PlayerItem | None]:
    """Players by id, in the order asked, null where unknown: one batched read."""
    ids = [clean_id(p, "ids") for p in player_ids]
    clean_id_list(ids, "ids")
    return await ctx.loaders.player.load_many(ids)


async def resolve_player_by_email(ctx: Context, email: str) -> PlayerItem | None:
    player = await players.get_player_by_email(
        ctx.db, clean_email(email), legacy=legacy_email(email)
    )
    if player is not None:
        ctx.loaders.player.prime(player.player_id, player)
    return player


async def resolve_entry(ctx: Context, player_id: str, leaderboard_id: str) -> ScoreItem | None:
    key = (player_id, clean_id(leaderboard_id, "leaderboardId"))
    return await ctx.loaders.entry.load(key)


async def resolve_rank(ctx: Context, player_id: str, leaderboard_id: str) -> RankInfo | None:
    key = (clean_id(player_id, "playerId"), clean_id(leaderboard_id, "leaderboardId"))
    return await ctx.loaders.rank.load(key)


async def resolve_ranks(
    ctx: Context, player_id: str, leaderboard_ids: list[str]
) -> list[RankInfo | None]:
    """The player's rank on each board, in the order asked; the lookups run concurrently."""
    ids = [clean_id(b, "leaderboardIds") for b in leaderboard_ids]
    clean_id_list(ids, "leaderboardIds")
    return await ctx.loaders.rank.load_many([(player_id, b) for b in ids])


async def resolve_player_scores(
    ctx: Context, player_id: str, first: int | None, after: str | None
) -> Page[ScoreItem]:
    return await page_of(partial(scores.player_scores, ctx.db, player_id), first, after)


async def resolve_player_results(
    ctx: Context, player_id: str, first: int | None, after: str | None
) -> Page[ResultItem]:
    """A page of the player's final results on every final board, newest period first."""
    ctx.uncacheable()  # no dependency names a player's results
    page = await page_of(partial(results.player_results, ctx.db, player_id), first, after)
    for result in page.items:
        ctx.loaders.result.prime((result.player_id, result.leaderboard_id), result)
    return page


async def resolve_player_sessions(
    ctx: Context, player_id: str, first: int | None, after: str | None
) -> Page[SessionItem]:
    return await page_of(partial(sessions.player_sessions, ctx.db, player_id), first, after)


async def create_player(ctx: Context, player_id: str | None, name: str, email: str) -> PlayerItem:
    created = ctx.clock()
    player = PlayerItem(
        player_id=clean_id(player_id, "id") if player_id is not None else _new_player_id(),
        name=clean_name(name),
        email=clean_email(email),
        created_at=created,
        updated_at=created,
    )
    with naming({Subject.PLAYER: "id", Subject.EMAIL: "email"}):
        await players.create_player(ctx.db, player, legacy_email=legacy_email(email))
    ctx.loaders.player.prime(player.player_id, player)
    return player


async def rename_player(ctx: Context, player_id: str, name: str) -> RenameResult:
    """Give the player a new name, on its item and on its entries, as far as the request's
    budget allows (complete is False short of that: sent again, the rename goes on)."""
    player = clean_id(player_id, "playerId")
    clean = clean_name(name)
    with (
        writing(ctx.responses, ctx.broker, atomic=False) as written,
        naming({Subject.PLAYER: "playerId"}),
    ):
        result = await renames.rename_player(ctx.db, player, clean, at=ctx.clock())
        written.boards += result.boards
        written.players.append(player)
    ctx.loaders.player.clear(player)
    ctx.loaders.player.prime(player, result.player)
    for board in dict.fromkeys(result.boards):
        ctx.loaders.entry.clear((player, board))
        ctx.broker.publish(board)
    return result


def _new_player_id() -> str:
    return f"p_{new_session_id().lower()}"
