"""The rank index in Redis: applying changes, answering counts, rebuilding and verifying."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from dynamo import scores
from dynamo.db import Db
from dynamo.items import parse
from dynamo.leaderboards import LeaderboardItem, get_leaderboard
from dynamo.reads import query_items
from dynamo.scores import ScoreItem, rank_value, tie_value
from rankindex.keys import CHECKPOINT, FEED, FEED_LENGTH, HEARTBEAT, STATE, board_keys, member
from rankindex.notices import Notice, encode
from rankindex.projection import BoardCreated, Change, Forget, Put

__all__ = ["MAX_LAG_MS", "IndexedRank", "RankIndex", "Verification"]

MAX_LAG_MS = 5_000
"""The index answers only while its projector caught up with the stream this recently."""
_CHUNK = 10_000
_SCRIPT = resources.files("rankindex").joinpath("apply.lua").read_text()
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
    """The player's indexed entry (``<tieValue>#<playerId>``); None when it holds none."""


Ask = tuple[str, str | None]
"""(player id, rank value): rank this value for the player; with None, the player's indexed
entry."""


@dataclass(frozen=True)
class Verification:
    board: str
    entries: int
    missing: list[str]
    """Members in the table, not in the index."""
    extra: list[str]
    """Members in the index, not in the table."""
    wrong_score: list[str]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.wrong_score)


class RankIndex:
    def __init__(self, redis: Redis, namespace: str, *, max_lag_ms: int = MAX_LAG_MS) -> None:
        self.redis = redis
        self.namespace = namespace
        self.max_lag_ms = max_lag_ms
        self._heartbeat = HEARTBEAT.format(ns=namespace)
        self._feed = FEED.format(ns=namespace)
        self._apply = redis.register_script(_SCRIPT)
        self._ranks = redis.register_script(_RANKS_SCRIPT)

    # -- the projector's side ------------------------------------------------------------

    async def apply(self, changes: Sequence[Change], notices: Sequence[Notice] = ()) -> int:
        """Apply changes in order, and append ``notices`` to the change feed after them (in
        the same round trip: a reader woken by a notice finds its change applied); returns
        how many changes altered the index."""
        if not changes and not notices:
            return 0
        async with self.redis.pipeline(transaction=False) as pipe:
            for change in changes:
                if isinstance(change, BoardCreated):
                    state = STATE.format(ns=self.namespace, board=change.board)
                    pipe.set(state, "ready", nx=True)
                    if change.expires_at:
                        pipe.expireat(state, change.expires_at)
                    continue
                if isinstance(change, Put):
                    args: list[Any] = [
                        "put",
                        change.player,
                        change.version,
                        change.member,
                        change.score,
                        change.expires_at or "",
                    ]
                elif isinstance(change, Forget):
                    args = ["forget", change.player, "", "", "", ""]
                else:
                    args = ["del", change.player, change.version, "", "", ""]
                keys = board_keys(self.namespace, change.board)
                await self._apply(keys=keys, args=args, client=pipe)
            for notice in notices:
                entry: dict[Any, Any] = encode(notice)
                pipe.xadd(self._feed, entry, maxlen=FEED_LENGTH, approximate=True)
            results = await pipe.execute()
        applied = sum(1 for r in results[: len(results) - len(notices)] if r == 1)
        last = next((c for c in reversed(changes) if isinstance(c, Put)), None)
        if last is not None:
            await self.redis.hset(
                self._heartbeat, mapping={"appliedAt": _now_ms(), "recordAt": last.played_ms}
            )
        return applied

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
            pipe.get(STATE.format(ns=self.namespace, board=board.leaderboard_id))
            pipe.hget(self._heartbeat, "caughtUpAt")
            for value in values:
                pipe.zcount(zset, f"({int(value)}", "+inf")
            state, caught_up, *counts = await pipe.execute()
        if not self._usable(state, caught_up):
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
                continue  # not ready: built, being rebuilt or stale
            total = int(reply[1])
            found[board] = [
                _indexed(_text(reply[2 + 2 * i]), int(reply[3 + 2 * i]), total, value)
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
            pipe.get(STATE.format(ns=self.namespace, board=board.leaderboard_id))
            pipe.hget(self._heartbeat, "caughtUpAt")
            pipe.zrevrank(zset, member(tie_value(entry.attained_at), entry.player_id))
            state, caught_up, position = await pipe.execute()
        if not self._usable(state, caught_up) or position is None:
            return None
        return int(position)

    def _usable(self, state: Any, caught_up: Any) -> bool:
        return state in (b"ready", "ready") and self._fresh(caught_up)

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
        only if newer than what the rebuild read). Returns the number of entries."""
        zset, meta, state, pending = board_keys(self.namespace, board_id)
        built_zset, built_meta = f"{zset}:built", f"{meta}:built"
        board = await get_leaderboard(db, board_id, count=False)
        if board is None:
            raise LookupError(f"no leaderboard {board_id!r}")
        await self.redis.set(state, "building")
        await self.redis.delete(built_zset, built_meta)
        count = 0
        async for chunk in _score_chunks(db, board):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(built_zset, {m: s for m, s, _, _ in chunk})
                pipe.hset(built_meta, mapping={p: f"{v}|{m}" for m, _, p, v in chunk})
                await pipe.execute()
            count += len(chunk)
        await self._apply(
            keys=[zset, meta, state, pending, built_zset, built_meta],
            args=["finish", "", "", "", "", ""],
        )
        if board.ttl:
            for key in (zset, meta, state):
                await self.redis.expireat(key, board.ttl)
        return count

    async def verify(self, db: Db, board_id: str) -> Verification:
        """Compare the index with the table; a board that differs is marked stale (readers
        fall back to the table until it is rebuilt)."""
        zset, _, state, _ = board_keys(self.namespace, board_id)
        board = await get_leaderboard(db, board_id, count=False)
        if board is None:
            raise LookupError(f"no leaderboard {board_id!r}")
        table: dict[str, int] = {}
        async for chunk in _score_chunks(db, board):
            table.update({m: s for m, s, _, _ in chunk})
        pairs: Any = await self.redis.zrange(zset, 0, -1, withscores=True)
        indexed: dict[str, int] = {
            (m.decode() if isinstance(m, bytes) else str(m)): int(s) for m, s in pairs
        }
        result = Verification(
            board=board_id,
            entries=len(table),
            missing=sorted(set(table) - set(indexed)),
            extra=sorted(set(indexed) - set(table)),
            wrong_score=sorted(m for m in set(table) & set(indexed) if table[m] != indexed[m]),
        )
        if not result.ok:
            await self.redis.set(state, "stale")
        return result


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _indexed(member: str, better: int, total: int, value: str | None) -> IndexedRank | None:
    if better < 0:
        return None
    if not member:
        # A value ranked for a player the index does not hold yet: it counts itself.
        return IndexedRank(better=better, total=total + 1, member=None)
    return IndexedRank(better=better, total=total, member=member)


_Row = tuple[str, int, str, int]


async def _score_chunks(db: Db, board: LeaderboardItem) -> AsyncIterator[list[_Row]]:
    """The board's entries from the table as (member, score, player, version), in chunks: each
    partition of the board's Score items (dynamo/scores.py) in turn."""
    for pk in scores.score_partitions(board):
        async for chunk in _partition_chunks(db, board, pk):
            yield chunk


async def _partition_chunks(db: Db, board: LeaderboardItem, pk: str) -> AsyncIterator[list[_Row]]:
    start: dict[str, str] | None = None
    while True:
        raw = await query_items(
            db,
            key_condition="pk = :pk AND begins_with(sk, :prefix)",
            values={":pk": pk, ":prefix": scores.SCORE.sk.prefix},
            limit=_CHUNK,
            start=start,
        )
        if not raw:
            return
        chunk: list[_Row] = []
        for item in raw:
            entry = parse(ScoreItem, item)
            value = int(rank_value(entry.score, board.score_width, board.sort_order))
            chunk.append(
                (
                    member(tie_value(entry.attained_at), entry.player_id),
                    value,
                    entry.player_id,
                    entry.version,
                )
            )
        yield chunk
        if len(raw) < _CHUNK:
            return
        start = {"pk": raw[-1]["pk"]["S"], "sk": raw[-1]["sk"]["S"]}
