"""The metrics' reference page, from their definitions (``leaderboard.metrics.Metrics``): each
metric's name as scraped, its type, labels, help, buckets, how several processes pool it, and
whether it exists only with a rank index (Redis)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

from prometheus_client.metrics import MetricWrapperBase

from docsgen.environment import unset_service_variables
from docsgen.markdown import code, escape, page, table
from edge.recording import CLIENT_GONE, OK, Transport
from leaderboard.metrics import ANONYMOUS, MAX_OPERATIONS, OTHER, Metrics

__all__ = ["render_metrics"]

SUFFIXES = {"counter": "_total", "histogram": "", "gauge": ""}
"""What prometheus-client adds to a metric's name in its samples (a histogram's are its name's
``_bucket``, ``_sum`` and ``_count``; the counters' and histograms' ``_created`` left aside)."""

POOLED = {
    "all": "the sum over every process since the directory was cleared",
    "liveall": "one series per live process",
    "livesum": "the sum over live processes",
    "livemax": "the highest of live processes",
    "livemostrecent": "the latest reading of live processes",
    "mostrecent": "the latest reading",
    "max": "the highest of every process",
    "min": "the lowest of every process",
    "sum": "the sum over every process",
}
"""How a gauge's multiprocess mode pools its processes' values (prometheus-client's modes)."""


def render_metrics() -> str:
    with unset_service_variables():
        everything = dict(_metrics(Metrics(rank_index=True)))
        always = {name for name, _ in _metrics(Metrics(rank_index=False))}
    rows = []
    for name, metric in everything.items():
        kind = str(metric._type)
        shown = code(name + SUFFIXES[kind])
        kind_shown = "histogram (`_bucket`, `_sum`, `_count`)" if kind == "histogram" else kind
        labels = ", ".join(code(label) for label in metric._labelnames) or "—"
        notes = [escape(str(metric._documentation))]
        if kind == "histogram":
            bounds = [b for b in getattr(metric, "_upper_bounds", ()) if b != float("inf")]
            notes.append(f"Buckets: {', '.join(f'{b:g}' for b in bounds)} and `+Inf`.")
        if name not in always:
            notes.append("Only with a rank index (`LEADERBOARD_REDIS_URL`).")
        rows.append((shown, kind_shown, labels, " ".join(notes), _pooled(metric, kind)))
    return page(
        "Metrics",
        [
            "`GET /metrics` serves these in the Prometheus text format (see [Settings]"
            "(settings.md) for who may scrape: `LEADERBOARD_METRICS_KEYS`, admin keys, or a "
            "loopback client that came through no proxy). The names are as scraped; the "
            "counters' and histograms' `_created` samples are left out.",
            f"The `operation` label is the operation's name, `{ANONYMOUS}` for an unnamed one, "
            f"and `{OTHER}` past the first {MAX_OPERATIONS} names a process has seen or for a "
            f"name that is no GraphQL name; `outcome` is `{OK}`, the code of the answer's "
            f"first error, or `HTTP_<status>` for a request refused before it was a GraphQL "
            f"request (`{CLIENT_GONE}` for a client that left before its answer); `transport` is "
            f"{' or '.join(code(t) for t in get_args(Transport))}.",
            "With `PROMETHEUS_MULTIPROC_DIR` set (or under `leaderboard serve --workers N`), a "
            "scrape of any process reports every process's samples, pooled as the last column "
            "says.",
        ],
        table(("metric", "type", "labels", "meaning", "across processes"), rows),
    )


def _metrics(owner: object, seen: set[int] | None = None) -> Iterator[tuple[str, Any]]:
    """Each metric an object of leaderboard.metrics holds, in the order it defines them,
    those of the objects it holds included."""
    seen = set() if seen is None else seen
    for value in vars(owner).values():
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, MetricWrapperBase):
            yield str(value._name), value
        elif type(value).__module__ == "leaderboard.metrics":
            yield from _metrics(value, seen)


def _pooled(metric: Any, kind: str) -> str:
    if kind != "gauge":
        return escape(POOLED["all"])
    mode = str(getattr(metric, "_multiprocess_mode", "all"))
    return escape(POOLED.get(mode, mode))
