"""The projector's lease: one projector of a table applies its stream at a time.

Every instance and worker may run a projector; each asks for the lease before each round and
each page it applies. The lease is a Redis string holding its holder's token and expiring
after ``ttl_ms`` unless the holder renews it: a holder that stops cleanly gives it up at
once, one that dies or hangs loses it when it expires, and then the next projector that asks
takes it over. Two projectors can still overlap briefly (a holder paused past its lease);
that is harmless, since applying a change is idempotent by the entry's version.

The same lease on a board's ``rankindex.keys.REBUILD`` key is a rebuild's claim on that board
(rankindex.maintenance): taken once, then only renewed (:meth:`Lease.renew`), so that a
rebuild that lost its claim never takes it back.
"""

from __future__ import annotations

import os
import socket
import uuid

from redis.asyncio import Redis

from rankindex.keys import LEASE

__all__ = ["LEASE_MS", "Lease"]

LEASE_MS = 3_000
"""How long a projector that stopped renewing keeps the lease: the longest pause of the
rank index and the change feed when a projector dies, shorter than the index's 5 s bound on
lag (readers keep using it across a takeover)."""

_HOLD = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
"""Renew the lease if this token holds it, take it if nobody does (as SET NX PX would):
check and set in one atomic step."""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""
"""Renew the lease if this token holds it; never take it."""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Lease:
    def __init__(
        self, redis: Redis, namespace: str, *, ttl_ms: int = LEASE_MS, key: str | None = None
    ) -> None:
        self.key = key or LEASE.format(ns=namespace)
        """The projector's lease of the namespace, unless another ``key`` is given."""
        self.ttl_ms = ttl_ms
        self.token = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        """Names the holder (host and process) for an operator reading the key."""
        self.held = False
        self._hold = redis.register_script(_HOLD)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    async def hold(self) -> bool:
        """Renew the lease, or take it if it is free; whether this projector holds it now."""
        self.held = bool(await self._hold(keys=[self.key], args=[self.token, self.ttl_ms]))
        return self.held

    async def renew(self) -> bool:
        """Renew the lease if this holder still holds it (a lapsed lease is not taken again);
        whether it does."""
        self.held = bool(await self._renew(keys=[self.key], args=[self.token, self.ttl_ms]))
        return self.held

    async def release(self) -> None:
        """Give the lease up, if this projector holds it (another may take it at once)."""
        self.held = False
        await self._release(keys=[self.key], args=[self.token])
