"""The configurations a fleet run measures, in order: the raw calls (the floor), then the
service with one worker and with ``workers`` workers, each with its response cache off and on.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CACHE_OFF", "TOP100_MIX", "Configuration", "configurations"]

CACHE_OFF = {"LEADERBOARD_CACHE_MB": "0"}
"""The service's environment with its response cache off (on is the default with Redis)."""

TOP100_MIX: tuple[tuple[str, int], ...] = (("leaderboard page", 100),)
"""The single-kind run: the top-100 page with names (``LeaderboardPage``, first 100) only."""


@dataclass(frozen=True)
class Configuration:
    """One thing measured: the raw calls (``workers`` 0), or the service with ``workers``
    worker processes and its response cache on or off."""

    workers: int
    cache: bool

    @property
    def raw(self) -> bool:
        return self.workers == 0

    @property
    def name(self) -> str:
        if self.raw:
            return "raw calls"
        processes = "1 worker" if self.workers == 1 else f"{self.workers} workers"
        return f"{processes}, cache {'on' if self.cache else 'off'}"

    @property
    def environment(self) -> dict[str, str]:
        """What the service's environment adds."""
        return {} if self.cache else dict(CACHE_OFF)

    @property
    def single(self) -> bool:
        """Whether the single-kind run at one client is measured in this configuration (the
        raw calls and one worker: the top-100 page against its floor)."""
        return self.workers <= 1


def configurations(workers: int) -> list[Configuration]:
    """The raw calls; one worker, cache off then on; ``workers`` workers, cache off then on
    (left out when ``workers`` is 1)."""
    found = [Configuration(0, False), Configuration(1, False), Configuration(1, True)]
    if workers > 1:
        found += [Configuration(workers, False), Configuration(workers, True)]
    return found
