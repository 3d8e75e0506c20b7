"""The change feed's reader: every instance follows the feed and tells its listeners.

The projector appends a notice to the feed (a Redis stream) for each change it applies; each
process runs one :class:`ChangeFeed`, which reads the stream from its end at start-up with a
blocking XREAD on a connection of its own, and hands each notice to its ``on_notice``
listeners (the app's broker wakes the board's subscribers). Notices are hints to re-read, so
a repeated one costs a read and nothing else.

A reader can lose its place: Redis restarted or lost the stream, the stream was trimmed past
what the reader had read, or the connection failed (notices may have come and gone meanwhile).
After every read, and every second when idle, the reader compares its place with the stream's
own counters (XINFO STREAM: the entries ever added, the first kept, the last); on any doubt
it tells its ``on_resync`` listeners that everything may have changed and goes on from the
stream's end. A failed connection is retried with backoff, forever: the reader never stops
the app and never holds a request.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from rankindex.cancellation import raise_if_cancelled
from rankindex.keys import FEED
from rankindex.notices import Notice, decode

__all__ = [
    "BLOCK_MS",
    "START",
    "ChangeFeed",
    "Place",
    "StreamInfo",
    "entry_id",
    "feed_client",
    "lost_place",
]

log = logging.getLogger("leaderboard.feed")

BLOCK_MS = 1_000
"""How long one XREAD waits for a notice; an idle reader checks its place this often."""
_BATCH = 1_000
_MAX_BACKOFF = 5.0

EntryId = tuple[int, int]


def entry_id(value: Any) -> EntryId:
    """A stream entry id (``<ms>-<seq>``) as a pair that orders as Redis orders ids."""
    text = value.decode() if isinstance(value, bytes) else str(value)
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def _text_id(value: EntryId) -> str:
    return f"{value[0]}-{value[1]}"


@dataclass(frozen=True)
class Place:
    """Where a reader is: the last entry it read, and how many entries the stream held up to
    and including it (entries ever added, as the stream counts them)."""

    last: EntryId
    counted: int


START = Place((0, 0), 0)
"""The place of a reader of a stream that does not exist yet."""


@dataclass(frozen=True)
class StreamInfo:
    """What XINFO STREAM tells of the stream."""

    last: EntryId
    """The last id the stream gave out."""
    first: EntryId
    """The first entry it still holds."""
    length: int
    added: int | None
    """Entries ever added (Redis 7 or later; None before)."""

    @classmethod
    def parse(cls, raw: dict[Any, Any]) -> StreamInfo:
        info = {(k.decode() if isinstance(k, bytes) else str(k)): v for k, v in raw.items()}
        first = info.get("recorded-first-entry-id")
        if first is None:  # before Redis 7: the first entry itself
            entry = info.get("first-entry")
            first = entry[0] if entry else info["last-generated-id"]
        added = info.get("entries-added")
        return cls(
            last=entry_id(info["last-generated-id"]),
            first=entry_id(first),
            length=int(info["length"]),
            added=None if added is None else int(added),
        )

    def place(self) -> Place:
        """The place of a reader at the stream's end."""
        return Place(self.last, self.added or 0)


def lost_place(place: Place, info: StreamInfo | None) -> bool:
    """Whether entries the reader has not read may be gone for good (``info`` None: the
    stream does not exist)."""
    if info is None:
        return place.counted > 0  # it existed, and was deleted or lost with Redis's data
    if info.last < place.last:
        return True  # the stream went back: a Redis restored from an older snapshot
    if info.added is None:
        return False
    if info.added < place.counted:
        return True  # the count went back: a new stream under the same key
    if info.last == place.last:
        return info.added != place.counted
    if info.length == 0 or place.last < info.first:
        # Everything the stream holds comes after the reader's place: every entry it no
        # longer holds should be one the reader has read.
        return info.added - info.length > place.counted
    return False


def feed_client(url: str) -> Redis:
    """The reader's own client: one connection held by a blocking XREAD, with a socket
    timeout well above the block; a failure surfaces at once (no silent retry), so that the
    reader knows it may have missed notices."""
    return Redis.from_url(
        url,
        socket_timeout=BLOCK_MS / 1000 + 5,
        socket_connect_timeout=5,
        socket_keepalive=True,
        client_name="leaderboard-feed",
        retry=Retry(NoBackoff(), 0),
    )


NoticeListener = Callable[[Notice], None]
ResyncListener = Callable[[], None]


class ChangeFeed:
    def __init__(self, redis: Redis, namespace: str, *, block_ms: int = BLOCK_MS) -> None:
        self.redis = redis
        self.key = FEED.format(ns=namespace)
        self.block_ms = block_ms
        self._notice_listeners: list[NoticeListener] = []
        self._resync_listeners: list[ResyncListener] = []
        self.connected = False
        self.notices = 0
        """Notices read since start-up."""
        self.resyncs = 0
        self.last_notice_at: float | None = None
        """Epoch seconds the latest notice was read."""
        self.lag_seconds: float | None = None
        """From the change to its notice's arrival here, for the latest notice that says when
        its change was made."""

    def on_notice(self, listener: NoticeListener) -> None:
        self._notice_listeners.append(listener)

    def on_resync(self, listener: ResyncListener) -> None:
        """``listener`` is called when notices may have been lost: everything may have
        changed."""
        self._resync_listeners.append(listener)

    def status(self) -> dict[str, Any]:
        """For /healthz."""
        now = time.time()
        return {
            "connected": self.connected,
            "notices": self.notices,
            "resyncs": self.resyncs,
            "lastNoticeAgoMs": _ms(now - self.last_notice_at) if self.last_notice_at else None,
            "lastDelayMs": _ms(self.lag_seconds) if self.lag_seconds is not None else None,
        }

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the feed until ``stop`` is set (seen within a block's wait) or the task is
        cancelled."""
        place: Place | None = None
        failures = 0
        while not stop.is_set():
            raise_if_cancelled()
            try:
                if place is None:
                    place = await self._rebase(resync=failures > 0)
                    self.connected = True
                    failures = 0
                place = await self._step(place)
            except Exception as error:
                if stop.is_set():
                    return  # a read cut short by the shutdown
                if not isinstance(error, RedisError | OSError):
                    log.exception("change feed reader failed; retrying")
                elif failures == 0:
                    log.warning(
                        "change feed unavailable; retrying", extra={"error": type(error).__name__}
                    )
                place, self.connected = None, False
                failures += 1
                await asyncio.sleep(_backoff(failures))

    async def _rebase(self, *, resync: bool) -> Place:
        """Go to the stream's end; with ``resync``, tell the listeners (after: a listener that
        re-reads then misses nothing the reader skipped)."""
        info = await self._info()
        if resync:
            self._resync()
        return START if info is None else info.place()

    async def _step(self, place: Place) -> Place:
        """Read what follows ``place`` (waiting up to the block), hand it out, and check that
        nothing was skipped."""
        reply: Any = await self.redis.xread(
            {self.key: _text_id(place.last)}, count=_BATCH, block=self.block_ms
        )
        for _, entries in reply or []:
            for raw_id, fields in entries:
                place = Place(entry_id(raw_id), place.counted + 1)
                notice = decode(fields)
                if notice is not None:
                    self._deliver(notice)
        info = await self._info()
        if lost_place(place, info):
            self._resync()
            return START if info is None else info.place()
        return place

    async def _info(self) -> StreamInfo | None:
        try:
            raw: dict[Any, Any] = await self.redis.xinfo_stream(self.key)
        except ResponseError as error:
            if "no such key" in str(error).lower():
                return None
            raise
        return StreamInfo.parse(raw)

    def _deliver(self, notice: Notice) -> None:
        now = time.time()
        self.notices += 1
        self.last_notice_at = now
        if notice.at_ms is not None:
            self.lag_seconds = max(0.0, now - notice.at_ms / 1000)
        for listener in self._notice_listeners:
            try:
                listener(notice)
            except Exception:
                log.exception("a change feed listener failed")

    def _resync(self) -> None:
        self.resyncs += 1
        log.warning("change feed lost its place; everything is re-read")
        for listener in self._resync_listeners:
            try:
                listener()
            except Exception:
                log.exception("a change feed listener failed")


def _backoff(failures: int) -> float:
    """Seconds before the next try: doubling from 0.1 s up to 5 s, with jitter."""
    ceiling: float = min(_MAX_BACKOFF, 0.1 * 2 ** min(failures, 10))
    return random.uniform(ceiling / 2, ceiling)


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
