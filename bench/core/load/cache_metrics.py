"""The response cache's counters as the service's ``/metrics`` reports them, and the hit ratio
of a window from two scrapes."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass

__all__ = ["HITS", "MISSES", "CacheCounts", "cache_counts", "parse_cache_counts", "scrape"]

HITS = "leaderboard_cache_hits_total"
MISSES = "leaderboard_cache_misses_total"
_SCRAPE_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class CacheCounts:
    """Cacheable queries answered from the response cache (hits) and run (misses)."""

    hits: float
    misses: float

    def since(self, earlier: CacheCounts) -> CacheCounts:
        """The lookups between ``earlier`` and these counts."""
        return CacheCounts(self.hits - earlier.hits, self.misses - earlier.misses)

    @property
    def ratio(self) -> float | None:
        """Hits over lookups; None when there was no lookup."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups > 0 else None


def parse_cache_counts(text: str) -> CacheCounts:
    """The hit and miss counters of a Prometheus text exposition (0 for one it lacks; the
    samples of one counter, over any labels, added up)."""
    totals = {HITS: 0.0, MISSES: 0.0}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name not in totals:
            continue
        fields = (line.rsplit("}", 1)[1] if "{" in line else line.split(" ", 1)[1]).split()
        totals[name] += float(fields[0])
    return CacheCounts(totals[HITS], totals[MISSES])


def scrape(metrics_url: str) -> str:
    """The text of one scrape of ``metrics_url`` (from loopback, which the service lets
    scrape)."""
    with urllib.request.urlopen(metrics_url, timeout=_SCRAPE_TIMEOUT_SECONDS) as response:
        body: bytes = response.read()
    return body.decode()


def cache_counts(metrics_url: str) -> CacheCounts:
    """The service's response-cache counters now."""
    return parse_cache_counts(scrape(metrics_url))
