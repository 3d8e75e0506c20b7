"""The rank index in Redis: applying changes, answering counts, rebuilding and verifying."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError

from dynamo.db import Db
from dynamo.leaderboards import LeaderboardItem
from dynamo.scores import ScoreItem, rank_value, tie_value
from rankindex import maintenance
from rankindex.keys import (
    CHECKPOINT,
    FEED,
    FEED_LENGTH,
    HEARTBEAT,
    LEGACY_META,
    READY,
    STATE,
    TIE_BYTES,
    board_keys,
    member,
    member_text,
    tie_bytes,
)
from rankindex.maintenance import RebuildBusy, Verification, WrittenByEarlierVersion
from rankindex.notices import Notice, encode
from rankindex.players import FILL, Layout, bucket_index, bucket_key, record_version
from rankindex.projection import BoardCreated, Change, Forget, Put

__all__ = [
    "MAX_LAG_MS",
    "IndexedRank",
    "OutdatedListener",
    "RankIndex",
    "RebuildBusy",
    "Verification",
    "WrittenByEarlierVersion",
    "layout_of",
]

log = logging.getLogger("leaderboard.rankindex")

MAX_LAG_MS = 5_000
"""The index answers only while its projector caught up with the stream this recently."""
_SCRIPT = (
    resources.files("rankindex").joinpath("apply.lua").read_text().replace("@FILL@", str(FILL))
)
_RANKS_SCRIPT = resources.files("rankindex").joinpath("ranks.lua").read_text()


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class IndexedRank:
    """A player's position on a board as the index holds it."""

    better: int
    """Entries strictly better."""
    total: int
    """Entries on the board, the ranked one included."""
    member: str | None
    """The player's indexed entry as text (``<tieValue>#<playerId>``, see
    ``rankindex.keys.member_text``); None when it holds none."""


OutdatedListener = Callable[[str], None]
"""Told the id of a board that a change found complete in the first format (or written to by
a projector of that format) and set aside."""
_ALTERED, _SET_ASIDE = 1, 3
"""What the apply script answers for a change that altered the index, and for one that set a
board of the first format aside (rankindex/apply.lua)."""

Ask = tuple[str, str | None]
"""(player id, rank value): rank this value for the player; with None, the player's indexed
entry."""


class RankIndex:
    def __init__(self, redis: Redis, namespace: str, *, max_lag_ms: int = MAX_LAG_MS) -> None:
        self.redis = redis
        self.namespace = namespace
        self.max_lag_ms = max_lag_ms
        self._heartbeat = HEARTBEAT.format(ns=namespace)
        self._feed = FEED.format(ns=namespace)
        self._apply = redis.register_script(_SCRIPT)
        self._ranks = redis.register_script(_RANKS_SCRIPT)
        self._outdated_listeners: list[OutdatedListener] = []

    # -- the projector's side ------------------------------------------------------------

    def on_outdated(self, listener: OutdatedListener) -> None:
        """``listener`` is told each board that a change applied through this index found
        complete in the first format, or written to by a projector of that format: its keys of
        that format are deleted, and it waits for a rebuild."""
        self._outdated_listeners.append(listener)

    async def apply(self, changes: Sequence[Change], notices: Sequence[Notice] = ()) -> int:
        """Apply changes in order, and append ``notices`` to the change feed after them (in
        the same round trip: a reader woken by a notice finds its change applied); returns
        how many changes altered the index."""
        if not changes and not notices:
            return 0
        scripted: list[tuple[int, str]] = []
        """(position of the script's answer, board) of each change the script applies."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for change in changes:
                if isinstance(change, BoardCreated):
                    state = STATE.format(ns=self.namespace, board=change.board)
                    pipe.set(state, READY, nx=True)
                    if change.expires_at:
                        pipe.expireat(state, change.expires_at)
                    continue
                if isinstance(change, Put):
                    args: list[Any] = [
                        "put",
                        change.player,
                        change.version,
                        tie_bytes(change.tie),
                        change.score,
                        change.expires_at or "",
                    ]
                elif isinstance(change, Forget):
                    args = ["forget", change.player, "", "", "", ""]
                else:
                    args = ["del", change.player, change.version, "", "", ""]
                keys = board_keys(self.namespace, change.board)
                scripted.append((len(pipe), change.board))
                await self._apply(keys=keys, args=args, client=pipe)
            for notice in notices:
                entry: dict[Any, Any] = encode(notice)
                pipe.xadd(self._feed, entry, maxlen=FEED_LENGTH, approximate=True)
            results = await pipe.execute()
        applied = sum(1 for r in results[: len(results) - len(notices)] if r == _ALTERED)
        self._tell_outdated(sorted({board for i, board in scripted if results[i] == _SET_ASIDE}))
        last = next((c for c in reversed(changes) if isinstance(c, Put)), None)
        if last is not None:
            await self.redis.hset(
                self._heartbeat, mapping={"appliedAt": _now_ms(), "recordAt": last.played_ms}
            )
        return applied

    def _tell_outdated(self, boards: Sequence[str]) -> None:
        for board in boards:
            for listener in self._outdated_listeners:
                try:
                    listener(board)
                except Exception:
                    log.exception("a listener of outdated boards failed")

    async def caught_up(self) -> None:
        """The projector has read everything the stream holds right now."""
        await self.redis.hset(self._heartbeat, "caughtUpAt", _now_ms())

    async def checkpoint(self, shard: str) -> str | None:
        """The last sequence number applied from the shard."""
        value = await self.redis.get(CHECKPOINT.format(ns=self.namespace, shard=shard))
        return value.decode() if isinstance(value, bytes) else value

    async def set_checkpoint(self, shard: str, sequence_number: str) -> None:
        await self.redis.set(CHECKPOINT.format(ns=self.namespace, shard=shard), sequence_number)

    # -- the readers' side ---------------------------------------------------------------

    async def better_counts(
        self, board: LeaderboardItem, entries: Iterable[ScoreItem]
    ) -> dict[str, int] | None:
        """For each entry's rank value v, how many entries are strictly better: ZCOUNT over
        (v, +inf]. None when the index cannot answer for this board (not built, stale, or
        its projector behind): the caller counts in the table instead."""
        values = sorted({rank_value(e.score, board.score_width, board.sort_order) for e in entries})
        zset = board_keys(self.namespace, board.leaderboard_id)[0]
        async with self.redis.pipeline(transaction=False) as pipe:
            self._board_state(pipe, board.leaderboard_id)
            for value in values:
                pipe.zcount(zset, f"({int(value)}", "+inf")
            state, written, caught_up, *counts = await pipe.execute()
        if not self._usable(state, written, caught_up):
            return None
        return dict(zip(values, (int(c) for c in counts), strict=True))

    async def ranks(
        self, asks: Mapping[str, Sequence[Ask]]
    ) -> dict[str, list[IndexedRank | None]] | None:
        """Ranks of players on boards in one round trip: for each board id, one answer per
        ask, in order; None for an ask without a value whose player has no indexed entry.
        A board the index cannot answer for is left out; None when the index is behind."""
        boards = list(asks)
        try:
            caught_up, *replies = await self._read_ranks(asks)
        except NoScriptError:  # a restarted or flushed Redis: load the script once, again
            await self.redis.script_load(_RANKS_SCRIPT)
            caught_up, *replies = await self._read_ranks(asks)
        if not self._fresh(caught_up):
            return None
        found: dict[str, list[IndexedRank | None]] = {}
        for board, reply in zip(boards, replies, strict=True):
            if len(reply) < 2:
                continue  # not ready: built, being rebuilt, stale or of an earlier format
            total = int(reply[1])
            found[board] = [
                _indexed(_bytes(reply[2 + 2 * i]), int(reply[3 + 2 * i]), total, value)
                for i, (_, value) in enumerate(asks[board])
            ]
        return found

    async def _read_ranks(self, asks: Mapping[str, Sequence[Ask]]) -> list[Any]:
        """The heartbeat and each board's ranks script in one pipeline. EVALSHA is sent
        directly: a pipeline running a registered Script would first ask SCRIPT EXISTS, a
        round trip of its own, every time."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(self._heartbeat, "caughtUpAt")
            for board, board_asks in asks.items():
                keys = board_keys(self.namespace, board)[:3]
                args = [a for player, value in board_asks for a in (player, value or "")]
                pipe.evalsha(self._ranks.sha, len(keys), *keys, *args)
            replies: list[Any] = await pipe.execute()
        return replies

    async def listed_before(self, board: LeaderboardItem, entry: ScoreItem) -> int | None:
        """How many entries the board lists before ``entry`` (better, or tied and attained
        earlier); None when the index cannot answer."""
        zset = board_keys(self.namespace, board.leaderboard_id)[0]
        async with self.redis.pipeline(transaction=False) as pipe:
            self._board_state(pipe, board.leaderboard_id)
            pipe.zrevrank(zset, member(tie_value(entry.attained_at), entry.player_id))
            state, written, caught_up, position = await pipe.execute()
        if not self._usable(state, written, caught_up) or position is None:
            return None
        return int(position)

    def _board_state(self, pipe: Pipeline, board_id: str) -> None:
        """Queue what :meth:`_usable` judges a board by: its state, whether the first format's
        version hash exists, and the projector's heartbeat."""
        pipe.get(STATE.format(ns=self.namespace, board=board_id))
        pipe.exists(LEGACY_META.format(ns=self.namespace, board=board_id))
        pipe.hget(self._heartbeat, "caughtUpAt")

    def _usable(self, state: Any, written: Any, caught_up: Any) -> bool:
        """The board is ready in this format, with no first-format version hash (a projector
        of the first format, not yet upgraded, wrote to it: its sorted set may hold members of
        that format too), and the projector is fresh."""
        ready = _bytes(state) == READY.encode() and not int(written)
        return ready and self._fresh(caught_up)

    def _fresh(self, caught_up: Any) -> bool:
        """The projector caught up with the stream recently enough."""
        return caught_up is not None and _now_ms() - int(caught_up) <= self.max_lag_ms

    async def lag(self) -> dict[str, Any]:
        """For /healthz: how far behind the projector is."""
        raw = await self.redis.hgetall(self._heartbeat)
        beat = {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in raw.items()}
        now = _now_ms()
        return {
            "caughtUpAgoMs": now - beat["caughtUpAt"] if "caughtUpAt" in beat else None,
            "lastRecordAgeMs": now - beat["recordAt"] if "recordAt" in beat else None,
            "lastApplyLagMs": beat["appliedAt"] - beat["recordAt"] if "recordAt" in beat else None,
            "inSync": "caughtUpAt" in beat and now - beat["caughtUpAt"] <= self.max_lag_ms,
        }

    # -- maintenance ---------------------------------------------------------------------

    async def rebuild(self, db: Db, board_id: str) -> int:
        """Build the board's index from its Score items in the table and swap it in at once.
        Changes that arrive meanwhile are queued and replayed after the swap (each applied
        only if newer than what the rebuild read). Returns the number of entries; raises
        RebuildBusy while another rebuild of the board is under way, LookupError for a board
        the table does not have, and WrittenByEarlierVersion when a projector of the first
        format went on writing to the board during its rebuilds (it is left outdated)."""

        async def script(keys: list[str], args: list[Any]) -> Any:
            return await self._apply(keys=keys, args=args)

        return await maintenance.rebuild(self.redis, self.namespace, db, board_id, script)

    async def verify(self, db: Db, board_id: str) -> Verification:
        """Compare the index with the table; a board that differs is marked stale (readers
        fall back to the table until it is rebuilt)."""
        return await maintenance.verify(self.redis, self.namespace, db, board_id)

    async def record(self, board_id: str, player_id: str) -> tuple[int, str | None] | None:
        """The version the index holds of the player's entry on the board, and the entry
        (its member as text; None once removed); None when it holds nothing of the player.
        Two reads (the layout, then the bucket): a bucket split between them hides the record
        from this one call."""
        layout_key = board_keys(self.namespace, board_id)[2]
        layout = await layout_of(self.redis, layout_key) or Layout()
        key = bucket_key(self.namespace, board_id, layout, bucket_index(player_id, layout))
        found = await self.redis.hget(key, player_id)
        if found is None:
            return None
        raw = found if isinstance(found, bytes) else found.encode()
        if raw[:1] == b"-":
            return record_version(raw), None
        return record_version(raw), member_text(raw[:TIE_BYTES] + player_id.encode())


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode()


def _indexed(member: bytes, better: int, total: int, value: str | None) -> IndexedRank | None:
    if better < 0:
        return None
    if not member:
        # A value ranked for a player the index does not hold yet: it counts itself.
        return IndexedRank(better=better, total=total + 1, member=None)
    return IndexedRank(better=better, total=total, member=member_text(member))


async def layout_of(redis: Redis, key: str) -> Layout | None:
    """The layout a board's layout hash holds (None when there is none)."""
    raw: list[Any] = await redis.hmget(key, ["gen", "level", "split"])
    if raw[0] is None:
        return None
    gen, level, split = (int(v) for v in raw)
    return Layout(gen=gen, level=level, split=split)
