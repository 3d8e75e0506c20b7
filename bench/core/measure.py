"""Timing and statistics shared by the benchmarks: percentiles of latency samples, call
counts in one line, and one GraphQL request over HTTP with its failure as :class:`BenchError`."""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp

from bench.core.stack import API_KEY

__all__ = [
    "FAILURE_PAUSE_SECONDS",
    "BenchError",
    "format_calls",
    "percentiles",
    "post_graphql",
]


FAILURE_PAUSE_SECONDS = 3.0
"""The pause after a failed request: longer than the service's circuit breaker stays open."""


def format_calls(calls: Mapping[str, int]) -> str:
    """Call counts as ``GetItem+Query+BatchGetItem``, in the order first called; a name called
    more than once carries its count (``Query`` twice reads ``Query×2``)."""  # noqa: RUF002
    return (
        "+".join(
            name if n == 1 else f"{name}\N{MULTIPLICATION SIGN}{n}" for name, n in calls.items()
        )
        or "none"
    )


def percentiles(samples: Sequence[float]) -> tuple[float, float, float]:
    """p50, p95 and p99 (the inclusive method; 0 for no samples)."""
    if not samples:
        return 0.0, 0.0, 0.0
    if len(samples) == 1:
        return samples[0], samples[0], samples[0]
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98]


class BenchError(RuntimeError):
    """A benchmarked request failed or returned something other than what was asked for."""

    def __init__(self, message: str, *, code: str = "BENCH_ERROR") -> None:
        super().__init__(message)
        self.code = code
        """The error's GraphQL code (``extensions.code``), else ``HTTP_<status>``."""


async def post_graphql(
    http: aiohttp.ClientSession,
    url: str,
    query: str,
    variables: Mapping[str, Any],
    *,
    key: str | None = API_KEY,
) -> Any:
    """POST one GraphQL request (with ``key`` as its API key, if any); its data, or
    BenchError when it failed."""
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    async with http.post(
        url, json={"query": query, "variables": dict(variables)}, headers=headers
    ) as response:
        status = response.status
        body: Any = await response.json()
    if status != 200 or "errors" in body:
        errors = body.get("errors") if isinstance(body, dict) else None
        code = ((errors or [{}])[0].get("extensions") or {}).get("code") or f"HTTP_{status}"
        raise BenchError(f"HTTP {status}: {json.dumps(body)[:500]}", code=str(code))
    return body["data"]
