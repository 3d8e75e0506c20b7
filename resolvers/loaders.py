"""Per-request DataLoaders: every by-key read of a request goes through one of these.

Each loader returns exactly one result per key, in key order, ``None`` where missing. Loaders
are created per request (they cache), never shared between requests.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from aiodataloader import DataLoader

from dynamo import claims, entry_guards, leaderboards, players, results, sessions
from dynamo.claims import ClaimItem
from dynamo.db import Db
from dynamo.leaderboards import LeaderboardItem
from dynamo.players import PlayerItem
from dynamo.reads import BATCH_GET_LIMIT
from dynamo.results import ResultItem
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem
from resolvers.final import final_rank, is_final
from resolvers.rank_source import RankInfo, RankSource

__all__ = [
    "ClaimByPlayerBoardLoader",
    "EntryByPlayerBoardLoader",
    "EntryCountByBoardLoader",
    "LeaderboardByIdLoader",
    "Loaders",
    "PlayerByIdLoader",
    "RankByPlayerBoardLoader",
    "RankInfo",
    "ResultByPlayerBoardLoader",
    "SessionByKeyLoader",
]


K = TypeVar("K")
V = TypeVar("V")

_NOTHING: Any = object()
"""No value primed for a key."""


class _Loader(DataLoader[K, V | None], ABC):
    """A DataLoader that also tells, without waiting, what it already holds: a resolver whose
    value is at hand answers synchronously, which spares the executor a task per field.

    A primed value becomes the DataLoader's (a future of it) only when its key is loaded: a
    page primes each of its entries, and most are never loaded, read synchronously through
    :meth:`held` or not at all."""

    def __init__(self, db: Db) -> None:
        super().__init__(max_batch_size=BATCH_GET_LIMIT)
        self.db = db
        self._held: dict[K, V | None] = {}
        self._asked: set[K] = set()
        self._primed: dict[K, V | None] = {}
        """Values primed and not loaded since, nor held by the DataLoader before."""

    async def batch_load_fn(self, keys: list[K]) -> list[V | None]:
        found = await self.fetch(keys)
        self._held.update(zip(keys, found, strict=True))
        return found

    @abstractmethod
    async def fetch(self, keys: list[K]) -> list[V | None]:
        """One result per key, in key order, None where missing."""

    def load(self, key: K) -> asyncio.Future[V | None]:
        """The key's value, as a future of the caller's own: several fields loading one key
        share one read, and one of them cancelled (graphql-core cancels the siblings of a
        field whose error nulls their object) leaves the read, and the others, going on."""
        self._asked.add(key)
        if self._primed:
            primed = self._primed.pop(key, _NOTHING)
            if primed is not _NOTHING:
                super().prime(key, primed)
        return asyncio.shield(super().load(key))

    def asked(self, key: K) -> bool:
        """Whether the key was loaded (or is being loaded) or primed in this request."""
        return key in self._asked or key in self._held

    def prime(self, key: K, value: V | None) -> _Loader[K, V]:
        """As the DataLoader's: a key it holds (or that was primed already) keeps its value."""
        self._held.setdefault(key, value)
        if key not in self._cache:
            self._primed.setdefault(key, value)
        return self

    def clear(self, key: K) -> _Loader[K, V]:
        self._held.pop(key, None)
        self._asked.discard(key)
        self._primed.pop(key, None)
        super().clear(key)
        return self

    def clear_all(self) -> _Loader[K, V]:
        self._primed.clear()
        super().clear_all()
        return self

    def forget(self) -> None:
        """Drop every value read or primed (the request is answered)."""
        self._held.clear()
        self._asked.clear()
        self._primed.clear()
        super().clear_all()

    def held(self, key: K) -> tuple[bool, V | None]:
        """(True, value) when the key was read or primed in this request, else (False, None)."""
        if key in self._held:
            return True, self._held[key]
        return False, None


class PlayerByIdLoader(_Loader[str, PlayerItem]):
    """AP1: players by id, one GetItem/BatchGetItem per tick."""

    async def fetch(self, keys: list[str]) -> list[PlayerItem | None]:
        return await players.get_players(self.db, keys)


class LeaderboardByIdLoader(_Loader[str, LeaderboardItem]):
    """AP9: boards by id, one Query each per tick; with ConsistentRead when ``consistent``
    says so of any of the boards. A board of one partition comes with its ``entryCount``; a
    write-sharded board without it (``counted`` False: :class:`EntryCountByBoardLoader` reads
    it where it is asked for)."""

    def __init__(self, db: Db, consistent: Callable[[str], bool]) -> None:
        super().__init__(db)
        self.consistent = consistent

    async def fetch(self, keys: list[str]) -> list[LeaderboardItem | None]:
        consistent = any(self.consistent(k) for k in keys)
        return await leaderboards.get_leaderboards(
            self.db, keys, consistent=consistent, count=False
        )


class EntryCountByBoardLoader(_Loader[str, int]):
    """A board's ``entryCount`` by its id: the count the board's own read brought (a board of
    one partition: no further call), else its count shards, one Query per partition of a
    write-sharded board. Read with ConsistentRead when ``consistent`` says so of the board, or
    when this request wrote the board (:meth:`written`)."""

    def __init__(self, db: Db, board: LeaderboardByIdLoader) -> None:
        super().__init__(db)
        self.board = board
        self._written: set[str] = set()

    def written(self, board_id: str) -> None:
        """This request changed the board's count, or may have: it is read again, with
        ConsistentRead, when next asked for."""
        self._written.add(board_id)
        self.clear(board_id)

    async def fetch(self, keys: list[str]) -> list[int | None]:
        boards = await self.board.load_many(keys)
        counted = await asyncio.gather(
            *(
                leaderboards.count_entries(
                    self.db,
                    board,
                    consistent=board.leaderboard_id in self._written
                    or self.board.consistent(board.leaderboard_id),
                )
                for board in boards
                if board is not None
            )
        )
        found = {board.leaderboard_id: board.entry_count for board in counted}
        return [found.get(k) for k in keys]


class SessionByKeyLoader(_Loader[tuple[str, str], SessionItem]):
    """AP8: sessions by (playerId, sessionId), one GetItem/BatchGetItem per tick."""

    async def fetch(self, keys: list[tuple[str, str]]) -> list[SessionItem | None]:
        return await sessions.get_sessions(self.db, keys)


class EntryByPlayerBoardLoader(_Loader[tuple[str, str], ScoreItem]):
    """A player's entry by (playerId, leaderboardId): AP4 for one key, the entry guards in one
    BatchGetItem for several."""

    async def fetch(self, keys: list[tuple[str, str]]) -> list[ScoreItem | None]:
        return await entry_guards.current_entries(self.db, keys)


class ResultByPlayerBoardLoader(_Loader[tuple[str, str], ResultItem]):
    """A player's final result on a board by (playerId, leaderboardId), one GetItem or
    BatchGetItem per tick; None where the board is not final or the player had no entry."""

    async def fetch(self, keys: list[tuple[str, str]]) -> list[ResultItem | None]:
        return await results.get_results(self.db, keys)


class ClaimByPlayerBoardLoader(_Loader[tuple[str, str], ClaimItem]):
    """The claim of a player's final result on a board by (playerId, leaderboardId), one
    GetItem or BatchGetItem per tick; None while unclaimed."""

    async def fetch(self, keys: list[tuple[str, str]]) -> list[ClaimItem | None]:
        return await claims.get_claims(self.db, keys)


class RankByPlayerBoardLoader(_Loader[tuple[str, str], RankInfo]):
    """AP10: a player's rank by (playerId, leaderboardId).

    With the rank index in sync, one round trip to it answers every key whose entry it holds.
    The other keys (and every key when the index is off or behind) read the entry and the
    board from the table and are ranked per board: by the index, or by one set of concurrent
    range COUNTs (dynamo.ranks). An entry this request already holds (:meth:`know`, e.g. the
    one a submission just wrote) is ranked as held, never from an older indexed copy.

    A FINAL board's ranks are its results' (resolvers/final.py): read by ``result`` for the
    keys of a board this request holds FINAL already (the index is not asked), and for those
    whose board the table read finds FINAL."""

    def __init__(
        self,
        db: Db,
        entry: EntryByPlayerBoardLoader,
        board: LeaderboardByIdLoader,
        count: EntryCountByBoardLoader,
        source: RankSource,
        result: ResultByPlayerBoardLoader,
    ) -> None:
        super().__init__(db)
        self.entry = entry
        self.board = board
        self.count = count
        self.source = source
        self.result = result
        self.known: dict[tuple[str, str], ScoreItem] = {}

    def know(self, entry: ScoreItem) -> None:
        """Rank ``entry`` as it is, for its player and board, from now on in this request."""
        key = (entry.player_id, entry.leaderboard_id)
        if self.known.get(key) != entry:
            self.known[key] = entry
            self.clear(key)

    async def rank_entry(self, entry: ScoreItem) -> RankInfo | None:
        """The rank of ``entry`` as the request holds it: the key's rank when it was (or is
        being) computed from this very entry, else counted again for it."""
        key = (entry.player_id, entry.leaderboard_id)
        if not self.asked(key):
            self.known[key] = entry
            return await self.load(key)
        ranked = await self.load(key)
        if ranked is not None and ranked.entry == entry:
            return ranked
        self.know(entry)
        return await self.load(key)

    async def fetch(self, keys: list[tuple[str, str]]) -> list[RankInfo | None]:
        final = [k for k in keys if self._held_final(k[1])]
        live = [k for k in keys if not self._held_final(k[1])]
        found, results = await asyncio.gather(
            self.source.indexed([k for k in live if k not in self.known]),
            self._from_results(final),
        )
        found.update(results)
        rest = [k for k in live if k not in found]
        if rest:
            found.update(await self._from_table(rest))
        return [found.get(k) for k in keys]

    def _held_final(self, board_id: str) -> bool:
        held, board = self.board.held(board_id)
        return held and board is not None and is_final(board)

    async def _from_results(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], RankInfo]:
        """The ranks of keys on FINAL boards: their results'."""
        found = await self.result.load_many(keys) if keys else []
        return {k: final_rank(r) for k, r in zip(keys, found, strict=True) if r is not None}

    async def _from_table(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], RankInfo]:
        unknown = [k for k in keys if k not in self.known]
        loaded, boards = await asyncio.gather(
            self.entry.load_many(unknown), self.board.load_many([b for _, b in keys])
        )
        entries = {**dict(zip(unknown, loaded, strict=True)), **self.known}
        by_board: dict[str, tuple[LeaderboardItem, list[ScoreItem]]] = {}
        final: list[tuple[str, str]] = []
        for key, board in zip(keys, boards, strict=True):
            entry = entries.get(key)
            if board is not None and is_final(board):
                final.append(key)
            elif entry is not None and board is not None:
                by_board.setdefault(board.leaderboard_id, (board, []))[1].append(entry)
        results, ranked = await asyncio.gather(
            self._from_results(final),
            asyncio.gather(
                *(
                    self.source.rank_entries(board, es, partial(self.count.load, board_id))
                    for board_id, (board, es) in by_board.items()
                )
            ),
        )
        return {**results, **{(r.player_id, r.leaderboard_id): r for rs in ranked for r in rs}}


@dataclass(frozen=True)
class Loaders:
    player: PlayerByIdLoader
    leaderboard: LeaderboardByIdLoader
    entry_count: EntryCountByBoardLoader
    session: SessionByKeyLoader
    entry: EntryByPlayerBoardLoader
    rank: RankByPlayerBoardLoader
    result: ResultByPlayerBoardLoader
    claim: ClaimByPlayerBoardLoader

    @classmethod
    def create(
        cls, db: Db, ranks: RankSource, *, consistent: Callable[[str], bool] = lambda _: False
    ) -> Loaders:
        """Fresh loaders bound to the running event loop; call once per request.
        ``consistent``: whether a board's item is read with ConsistentRead."""
        entry = EntryByPlayerBoardLoader(db)
        leaderboard = LeaderboardByIdLoader(db, consistent)
        entry_count = EntryCountByBoardLoader(db, leaderboard)
        result = ResultByPlayerBoardLoader(db)
        return cls(
            player=PlayerByIdLoader(db),
            leaderboard=leaderboard,
            entry_count=entry_count,
            session=SessionByKeyLoader(db),
            entry=entry,
            rank=RankByPlayerBoardLoader(db, entry, leaderboard, entry_count, ranks, result),
            result=result,
            claim=ClaimByPlayerBoardLoader(db),
        )

    def forget(self) -> None:
        """Drop every value the loaders read or were primed with."""
        for loader in (
            self.player,
            self.leaderboard,
            self.entry_count,
            self.session,
            self.entry,
            self.rank,
            self.result,
            self.claim,
        ):
            loader.forget()

    def board_written(self, board: LeaderboardItem) -> None:
        """This request wrote ``board`` as it now stands (the board as a play left it): later
        fields read it from here, and its count too when it holds it; a count it does not
        hold is read again, with ConsistentRead."""
        board_id = board.leaderboard_id
        self.leaderboard.clear(board_id).prime(board_id, board)
        self.entry_count.written(board_id)
        if board.counted:
            self.entry_count.prime(board_id, board.entry_count)
