"""Ranks of the entries of a page or window, computed once per list and only when asked for."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.scores import ScoreItem
from resolvers.context import Context
from resolvers.inputs import FieldError
from resolvers.rank_source import RankInfo

__all__ = [
    "MAX_AROUND",
    "WindowRanks",
    "check_window_size",
    "resolve_ranked_entry",
    "resolve_score_rank",
]

MAX_AROUND = 50
"""Most entries an around-me window shows on each side of the player's (``before``,
``after``)."""


class WindowRanks:
    """The ranks of a contiguous run of a board's entries (best first). The first request for
    any of them computes all of them (no Query for a run from the top, two COUNTs otherwise)."""

    def __init__(
        self,
        ctx: Context,
        leaderboard_id: str,
        window: Sequence[ScoreItem],
        *,
        from_top: bool,
        known: Sequence[int] | None = None,
    ) -> None:
        self._ctx = ctx
        self._leaderboard_id = leaderboard_id
        self._window = list(window)
        self._from_top = from_top
        self._ranks: asyncio.Future[dict[str, int]] | None = None
        self._computed: dict[str, int] | None = None
        """The ranks, once :meth:`held` found them computed."""
        if known is not None:
            done: asyncio.Future[dict[str, int]] = asyncio.get_running_loop().create_future()
            done.set_result(self._by_player(known))
            self._ranks = done

    def _by_player(self, values: Sequence[int]) -> dict[str, int]:
        return {e.player_id: r for e, r in zip(self._window, values, strict=True)}

    async def _compute(self) -> dict[str, int]:
        board = await self._ctx.loaders.leaderboard.load(self._leaderboard_id)
        if board is None:
            return {}
        computed = await self._ctx.ranks.window_ranks(board, self._window, from_top=self._from_top)
        return self._by_player(computed)

    def _ensure(self) -> asyncio.Future[dict[str, int]]:
        if self._ranks is None:
            self._ranks = asyncio.ensure_future(self._compute())
        return self._ranks

    async def compute(self) -> None:
        """Compute the ranks now (they are held from then on)."""
        await self._ensure()

    async def rank(self, entry: ScoreItem) -> int | None:
        return (await self._ensure()).get(entry.player_id)

    def held(self, entry: ScoreItem) -> tuple[bool, int | None]:
        """(True, rank) once the ranks are computed, else (False, None)."""
        computed = self._computed
        if computed is None:
            ranks = self._ranks
            if ranks is None or not ranks.done() or ranks.cancelled() or ranks.exception():
                return False, None
            computed = self._computed = ranks.result()
        return True, computed.get(entry.player_id)


async def resolve_score_rank(
    ctx: Context, entry: ScoreItem, window: WindowRanks | None
) -> int | None:
    """The rank of a Score: from its list when it came in one, else from the rank loader."""
    if window is not None:
        return await window.rank(entry)
    info = await ctx.loaders.rank.rank_entry(entry)
    return info.rank if info is not None else None


async def resolve_ranked_entry(ctx: Context, info: RankInfo) -> ScoreItem:
    """The entry a rank belongs to: as it came with the rank, else read from the table."""
    if info.entry is not None:
        return info.entry
    entry = await ctx.loaders.entry.load((info.player_id, info.leaderboard_id))
    if entry is None:
        # The rank index (a moment behind the table) ranked an entry an operator has just
        # removed: the rank is of an entry that is no more.
        raise LeaderboardError(
            ErrorCode.ENTRY_NOT_FOUND,
            f"the entry of {info.player_id!r} on {info.leaderboard_id!r} that was ranked has "
            "just been removed; ask again",
        )
    return entry


def check_window_size(before: int, after: int) -> None:
    for name, value in (("before", before), ("after", after)):
        if not 0 <= value <= MAX_AROUND:
            raise FieldError(
                ErrorCode.INVALID_ARGUMENT, f"{name} must be between 0 and {MAX_AROUND}", name
            )
