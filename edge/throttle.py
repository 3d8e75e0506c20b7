"""Each anonymous client's allowance of cost points: a token bucket per client address.

A client may spend up to ``burst`` points at once and regains ``rate`` points a second (the
leaky bucket Shopify's GraphQL API documents). A document is admitted only when its client has
the points its static cost needs (edge/cost_model.py); otherwise it is refused with THROTTLED and
the seconds after which it would be admitted. The buckets of at most ``tracked`` addresses are kept,
the least recently seen forgotten first (a forgotten client starts again with a full bucket).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Allowances", "ClientAllowance"]


@dataclass
class _Bucket:
    points: float
    updated: float


class Allowances:
    def __init__(
        self,
        *,
        rate: float,
        burst: int,
        tracked: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.tracked = tracked
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def for_client(self, address: str) -> ClientAllowance:
        return ClientAllowance(self, address)

    def _bucket(self, address: str) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(address)
        if bucket is None:
            bucket = _Bucket(points=float(self.burst), updated=now)
            self._buckets[address] = bucket
            while len(self._buckets) > self.tracked:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(address)
            bucket.points = min(self.burst, bucket.points + (now - bucket.updated) * self.rate)
            bucket.updated = now
        return bucket

    def spend(self, address: str, cost: int) -> float | None:
        """Take ``cost`` points from the client's bucket: None when they were there, else the
        seconds until they will be (nothing is taken then)."""
        bucket = self._bucket(address)
        if cost <= bucket.points:
            bucket.points -= cost
            return None
        return max(1.0, math.ceil((cost - bucket.points) / self.rate))

    def available(self, address: str) -> float:
        return self._bucket(address).points


@dataclass(frozen=True)
class ClientAllowance:
    """One client's view of the allowances: what a request of it may spend."""

    allowances: Allowances
    address: str

    def spend(self, cost: int) -> float | None:
        return self.allowances.spend(self.address, cost)

    def status(self) -> dict[str, float]:
        return {
            "maximumAvailable": self.allowances.burst,
            "currentlyAvailable": math.floor(self.allowances.available(self.address)),
            "restoreRate": self.allowances.rate,
        }
