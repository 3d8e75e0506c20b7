"""Rebuilding a board's index from the table, and verifying it against the table.

A rebuild first takes the board's claim (``rankindex.keys.REBUILD``, a lease renewed as the
rebuild goes): one rebuild of a board runs at a time, whichever process or command started it.
The apply script's ``begin`` marks the board ``building`` (changes arriving meanwhile are
queued) and gives the rebuild a generation of its own; the rebuild writes a new sorted set and
that generation of player buckets beside the ones in use, and then swaps them in with the
apply script's ``finish``, which replays the queued changes (each applied only if newer than
what the rebuild read). The generation it replaced is deleted after. ``begin`` and ``finish``
refuse a rebuild that no longer holds the claim (one paused past it, whose claim another
rebuild took): such a rebuild stops with :class:`RebuildBusy` and deletes what it wrote, which
no other rebuild uses. A rebuild that stopped before its end (its process killed) leaves the
board ``building`` without a claim; the next rebuild deletes what it wrote.

``begin`` and ``finish`` delete the first format's version hash. One that ``finish`` finds
again was written during the rebuild by a projector of the first format (a process not yet
upgraded holding the projector's lease, during a rolling upgrade), which applies changes
without queueing them: the rebuild may have read the table before such a change, so
``finish`` leaves the board outdated, and the rebuild is made again, under the same claim, up
to :data:`ATTEMPTS` times in all (then :class:`WrittenByEarlierVersion`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from dynamo import scores
from dynamo.db import Db
from dynamo.items import parse
from dynamo.leaderboards import LeaderboardItem, get_leaderboard
from dynamo.reads import query_items
from dynamo.scores import ScoreItem, rank_value, tie_value
from rankindex.cancellation import raise_if_cancelled
from rankindex.keys import REBUILD, STALE, board_keys, member, member_text
from rankindex.lease import Lease
from rankindex.players import (
    FILL,
    Layout,
    Row,
    bucket_key,
    entry_commands,
    layout_for,
    player_hash,
)

__all__ = [
    "ATTEMPTS",
    "CLAIM_MS",
    "RebuildBusy",
    "Verification",
    "WrittenByEarlierVersion",
    "delete_buckets",
    "rebuild",
    "verify",
    "write_rows",
]

_CHUNK = 10_000
_DELETE_BATCH = 1_000
CLAIM_MS = 60_000
"""How long a rebuild's claim on its board lasts unless renewed (before each chunk of entries
it writes): a rebuild that stops renewing (its process killed or stuck) leaves the board to
another rebuild after this long."""
ATTEMPTS = 3
"""Rebuilds of a board made in a row while a projector of the first format writes to it."""

Script = Callable[[list[str], list[Any]], Awaitable[Any]]
"""Runs the apply script (rankindex/apply.lua) with these keys and arguments."""


class RebuildBusy(RuntimeError):
    """Another rebuild of the board holds its claim: it was under way already, or took the
    claim over from this one, which then stopped without changing the board's index."""


class WrittenByEarlierVersion(RuntimeError):
    """A projector of the first format wrote to the board during each of its rebuilds (see
    the module's description): the board is left outdated, for a later rebuild."""


@dataclass(frozen=True)
class Verification:
    board: str
    entries: int
    missing: list[str]
    """Members in the table, not in the index (as text, ``<tieValue>#<playerId>``)."""
    extra: list[str]
    """Members in the index, not in the table."""
    wrong_score: list[str]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.wrong_score)


async def write_rows(
    redis: Redis, ns: str, board: str, zset: str, layout: Layout, rows: Sequence[Row]
) -> None:
    """Write entries into the sorted set ``zset`` and the buckets of ``layout``, in one round
    trip."""
    members, buckets = entry_commands(ns, board, layout, rows)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zadd(zset, members)
        for key, records in buckets.items():
            pipe.hset(key, mapping=records)  # type: ignore[arg-type]
        await pipe.execute()


async def delete_buckets(redis: Redis, ns: str, board: str, layout: Layout) -> None:
    """Delete every bucket of a generation of a board's player buckets."""
    keys = [bucket_key(ns, board, layout, i) for i in range(layout.buckets)]
    for start in range(0, len(keys), _DELETE_BATCH):
        await redis.unlink(*keys[start : start + _DELETE_BATCH])


async def _split_to_fill(
    redis: Redis,
    ns: str,
    board: str,
    layout: Layout,
    records: int,
    layout_key: str,
    claim: Lease,
) -> Layout:
    """Split buckets in turn, as the apply script does, until ``records`` average at most
    :data:`FILL` a bucket (a board that held more entries than its count said)."""
    while records > FILL * layout.buckets:
        await _renew(claim, board)
        n = 1 << layout.level
        source = bucket_key(ns, board, layout, layout.split)
        target_index = layout.split + n
        target = bucket_key(ns, board, layout, target_index)
        fields = {_raw(f): _raw(v) for f, v in (await redis.hgetall(source)).items()}
        moved = {
            f: v for f, v in fields.items() if player_hash(f.decode()) % (2 * n) == target_index
        }
        if moved:
            await redis.hset(target, mapping=moved)  # type: ignore[arg-type]
            await redis.hdel(source, *moved)
        split = layout.split + 1
        if split == n:
            layout = replace(layout, level=layout.level + 1, split=0)
            await redis.hset(layout_key, "building", f"{layout.gen}:{layout.level}")
        else:
            layout = replace(layout, split=split)
    return layout


async def rebuild(redis: Redis, ns: str, db: Db, board_id: str, script: Script) -> int:
    """Build the board's index from its Score items and swap it in (see the module's
    description); the number of entries. Raises RebuildBusy when another rebuild holds the
    board, LookupError when the table has no such board, WrittenByEarlierVersion when a
    projector of the first format wrote to it during each of :data:`ATTEMPTS` rebuilds."""
    board = await get_leaderboard(db, board_id)
    if board is None:
        raise LookupError(f"no leaderboard {board_id!r}")
    claim = Lease(redis, ns, key=REBUILD.format(ns=ns, board=board_id), ttl_ms=CLAIM_MS)
    if not await claim.hold():
        raise RebuildBusy(f"a rebuild of {board_id!r} is under way elsewhere")
    try:
        for _ in range(ATTEMPTS):
            count = await _claimed_rebuild(redis, ns, db, board, script, claim)
            if count is not None:
                return count
        raise WrittenByEarlierVersion(
            f"a projector of an earlier version wrote to {board_id!r} during each of"
            f" {ATTEMPTS} rebuilds"
        )
    finally:
        with contextlib.suppress(RedisError, OSError):
            await claim.release()


async def _claimed_rebuild(
    redis: Redis, ns: str, db: Db, board: LeaderboardItem, script: Script, claim: Lease
) -> int | None:
    """One rebuild under the claim: the number of entries; None when a projector of the first
    format wrote to the board meanwhile (it is left outdated)."""
    board_id = board.leaderboard_id
    zset, state, layout_key, pending = board_keys(ns, board_id)
    level = layout_for(board.entry_count or 0, 0).level
    keys = [zset, state, layout_key, pending, claim.key]
    began = await script(keys, ["begin", claim.token, level])
    if int(began[0]) < 0:
        raise RebuildBusy(f"the rebuild of {board_id!r} lost its claim to another")
    gen, was_gen, was_level = (int(v) for v in began)
    if was_gen:
        # Left by a rebuild that did not finish; a rebuild splits its buckets only to fill:
        # at most the next level's worth.
        await _delete_generation(redis, ns, board_id, Layout(was_gen, was_level + 1, 0))
    layout = Layout(gen, level)
    built_zset, built_layout = _built(ns, board_id, gen)
    try:
        count = 0
        async for chunk in _score_chunks(db, board):
            raise_if_cancelled()
            await _renew(claim, board_id)
            await write_rows(redis, ns, board_id, built_zset, layout, [row for _, row in chunk])
            count += len(chunk)
        layout = await _split_to_fill(redis, ns, board_id, layout, count, layout_key, claim)
        await redis.hset(
            built_layout,
            mapping={
                "gen": layout.gen,
                "level": layout.level,
                "split": layout.split,
                "players": count,
            },
        )
        if board.ttl:
            # Renamed keys keep their time to live; a bucket split later takes its source's.
            built = [built_zset, built_layout]
            built += [bucket_key(ns, board_id, layout, i) for i in range(layout.buckets)]
            async with redis.pipeline(transaction=False) as pipe:
                for key in built:
                    pipe.expireat(key, board.ttl)
                await pipe.execute()
        keys = [zset, state, layout_key, pending, built_zset, built_layout, claim.key]
        finished = await script(keys, ["finish", claim.token])
        if int(finished[0]) < 0:
            raise RebuildBusy(f"the rebuild of {board_id!r} lost its claim to another")
    except RebuildBusy:
        # What this rebuild wrote is its own generation's: no other rebuild uses it.
        await _delete_generation(redis, ns, board_id, replace(layout, level=layout.level + 1))
        raise
    _, old_gen, old_level, old_split, written = (int(v) for v in finished)
    if board.ttl:
        await redis.expireat(state, board.ttl)
    if old_gen and old_gen != layout.gen:
        await delete_buckets(redis, ns, board_id, Layout(old_gen, old_level, old_split))
    return None if written else count


def _built(ns: str, board: str, gen: int) -> tuple[str, str]:
    """The sorted set and the layout a rebuild of generation ``gen`` writes before its swap."""
    zset, _, layout_key, _ = board_keys(ns, board)
    return f"{zset}:built:{gen}", f"{layout_key}:built:{gen}"


async def _delete_generation(redis: Redis, ns: str, board: str, layout: Layout) -> None:
    """Delete what a rebuild of ``layout``'s generation wrote: its sorted set, its layout and
    its buckets (up to ``layout``'s)."""
    await redis.unlink(*_built(ns, board, layout.gen))
    await delete_buckets(redis, ns, board, layout)


async def _renew(claim: Lease, board_id: str) -> None:
    if not await claim.renew():
        raise RebuildBusy(f"the rebuild of {board_id!r} lost its claim to another")


async def verify(redis: Redis, ns: str, db: Db, board_id: str) -> Verification:
    """Compare the index with the table; a board that differs is marked stale (readers fall
    back to the table until it is rebuilt)."""
    zset, state, _, _ = board_keys(ns, board_id)
    board = await get_leaderboard(db, board_id, count=False)
    if board is None:
        raise LookupError(f"no leaderboard {board_id!r}")
    table: dict[bytes, int] = {}
    async for chunk in _score_chunks(db, board):
        table.update({m: row[2] for m, row in chunk})
    pairs: Any = await redis.zrange(zset, 0, -1, withscores=True)
    indexed: dict[bytes, int] = {bytes(m): int(s) for m, s in pairs}
    result = Verification(
        board=board_id,
        entries=len(table),
        missing=_texts(set(table) - set(indexed)),
        extra=_texts(set(indexed) - set(table)),
        wrong_score=_texts(m for m in set(table) & set(indexed) if table[m] != indexed[m]),
    )
    if not result.ok:
        await redis.set(state, STALE)
    return result


def _raw(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def _texts(members: Any) -> list[str]:
    return sorted(_text(m) for m in members)


def _text(raw: bytes) -> str:
    """A member as text; one that is no member of this format (written by something else)
    as it is."""
    try:
        return member_text(raw)
    except UnicodeDecodeError:
        return raw.hex()


async def _score_chunks(db: Db, board: LeaderboardItem) -> AsyncIterator[list[tuple[bytes, Row]]]:
    """The board's entries from the table as (member, row), in chunks: each partition of the
    board's Score items (dynamo/scores.py) in turn, read consistently (an entry the index
    had from the stream before a rebuild began is in what the rebuild reads)."""
    for pk in scores.score_partitions(board):
        async for chunk in _partition_chunks(db, board, pk):
            yield chunk


async def _partition_chunks(
    db: Db, board: LeaderboardItem, pk: str
) -> AsyncIterator[list[tuple[bytes, Row]]]:
    start: dict[str, str] | None = None
    while True:
        raw = await query_items(
            db,
            key_condition="pk = :pk AND begins_with(sk, :prefix)",
            values={":pk": pk, ":prefix": scores.SCORE.sk.prefix},
            limit=_CHUNK,
            start=start,
            consistent=True,
        )
        if not raw:
            return
        chunk: list[tuple[bytes, Row]] = []
        for item in raw:
            entry = parse(ScoreItem, item)
            value = int(rank_value(entry.score, board.score_width, board.sort_order))
            tie = tie_value(entry.attained_at)
            row: Row = (entry.player_id, tie, value, entry.version)
            chunk.append((member(tie, entry.player_id), row))
        yield chunk
        if len(raw) < _CHUNK:
            return
        start = {"pk": raw[-1]["pk"]["S"], "sk": raw[-1]["sk"]["S"]}
