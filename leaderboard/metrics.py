"""The service's metrics, served at ``GET /metrics`` in the Prometheus text format.

Each app has a registry of its own. With ``PROMETHEUS_MULTIPROC_DIR`` set (to an empty
directory, before the process starts), every process writes its samples to files there and a
scrape of any one of them reports the sum over all of them (prometheus-client's multiprocess
mode): counters and histograms add up, the socket gauges add up over live processes, the
circuit gauge is the highest of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from redis.exceptions import RedisError

from edge.app_keys import RANK_INDEX
from edge.guards import client_address
from edge.recording import OK, Transport
from rankindex.index import RankIndex

__all__ = [
    "ANONYMOUS",
    "MAX_OPERATIONS",
    "METRICS",
    "MULTIPROCESS_DIR",
    "OTHER",
    "ChangeFeedMetrics",
    "Metrics",
    "MetricsAccess",
    "ResponseCacheMetrics",
    "add_metrics_route",
    "pooled_metrics",
    "process_exited",
]

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable that turns on multiprocess mode (prometheus-client's own)."""
MAX_OPERATIONS = 200
"""Distinct operation names a process labels its samples with; later ones count as OTHER."""
ANONYMOUS = "anonymous"
"""The operation label of an operation without a name."""
OTHER = "other"
"""The label of operation names past MAX_OPERATIONS, or that are no GraphQL name, and of
outcomes that are no error code."""

_OPERATION_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]{0,99}")
_OUTCOME = re.compile(r"[A-Z][A-Z0-9_]{0,39}")
_FORWARDING_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP")
_BEARER = "bearer "


class Metrics:
    """The service's metrics, and the recorder the edge reports operations and
    sockets to (edge/recording.py)."""

    def __init__(self, *, rank_index: bool, max_operations: int = MAX_OPERATIONS) -> None:
        directory = os.environ.get(MULTIPROCESS_DIR)
        if directory and not os.path.isdir(directory):
            raise ValueError(f"{MULTIPROCESS_DIR} names no directory: {directory}")
        self.registry = CollectorRegistry()
        self.multiprocess = bool(directory)
        self.max_operations = max_operations
        self._operations: set[str] = set()
        # In multiprocess mode the samples live in the directory's files, and the registry
        # reads them all back; otherwise the metrics belong to this app's registry.
        own = None if self.multiprocess else self.registry
        self.requests = Counter(
            "leaderboard_requests",
            "GraphQL operations answered, by transport, operation name and outcome (ok or "
            "the first error's code).",
            ["transport", "operation", "outcome"],
            registry=own,
        )
        self.request_seconds = Histogram(
            "leaderboard_request_seconds",
            "Seconds from a GraphQL operation's arrival to its end, by transport and operation "
            "name (for a subscription, its whole life).",
            ["transport", "operation"],
            registry=own,
        )
        self.dynamodb_calls = Counter(
            "leaderboard_dynamodb_calls",
            "DynamoDB API calls made (a call's retries count once), by operation.",
            ["operation"],
            registry=own,
        )
        self.circuit_open = Gauge(
            "leaderboard_circuit_open",
            "1 while the DynamoDB circuit breaker refuses calls (open or half-open), else 0.",
            registry=own,
            multiprocess_mode="livemax",
        )
        self.websockets_open = Gauge(
            "leaderboard_websockets_open",
            "WebSocket connections open.",
            registry=own,
            multiprocess_mode="livesum",
        )
        self.subscriptions_active = Gauge(
            "leaderboard_subscriptions_active",
            "GraphQL subscriptions running.",
            registry=own,
            multiprocess_mode="livesum",
        )
        self.rank_index = _RankIndexGauges(own) if rank_index else None
        self.change_feed = ChangeFeedMetrics(own) if rank_index else None
        self.response_cache = ResponseCacheMetrics(own)
        if directory:
            # (prometheus_client.multiprocess has no type annotations.)
            MultiProcessCollector(self.registry, path=directory)  # type: ignore[no-untyped-call]

    def operation(
        self, transport: Transport, name: str | None, outcome: str, seconds: float
    ) -> None:
        label = self._operation_label(name)
        if outcome != OK and not _OUTCOME.fullmatch(outcome):
            outcome = OTHER
        self.requests.labels(transport, label, outcome).inc()
        self.request_seconds.labels(transport, label).observe(seconds)

    def sockets(self, open_sockets: int, subscriptions: int) -> None:
        self.websockets_open.set(open_sockets)
        self.subscriptions_active.set(subscriptions)

    def dynamodb_call(self, operation: str) -> None:
        self.dynamodb_calls.labels(operation).inc()

    def circuit(self, state: str) -> None:
        self.circuit_open.set(0 if state == "closed" else 1)

    async def render(self, index: RankIndex | None, read_within: float) -> bytes:
        """The exposition of every metric; the rank index's lag is read now, within
        ``read_within`` seconds (unknown, not an error, when it cannot be read)."""
        if self.rank_index is not None and index is not None:
            await self.rank_index.read(index, read_within)
        return generate_latest(self.registry)

    def _operation_label(self, name: str | None) -> str:
        if name is None:
            return ANONYMOUS
        if name in self._operations:
            return name
        if len(self._operations) >= self.max_operations or not _OPERATION_NAME.fullmatch(name):
            return OTHER
        self._operations.add(name)
        return name


class _RankIndexGauges:
    """How far behind the rank index's projector is, read from Redis at each scrape."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.lag_seconds = Gauge(
            "leaderboard_rank_index_lag_seconds",
            "Seconds since the rank index's projector last caught up with the table's stream "
            "(NaN when unknown: never caught up, or Redis did not answer).",
            registry=registry,
            multiprocess_mode="livemostrecent",
        )
        self.in_sync = Gauge(
            "leaderboard_rank_index_in_sync",
            "1 while the rank index is recent enough to answer ranks, else 0.",
            registry=registry,
            multiprocess_mode="livemostrecent",
        )

    async def read(self, index: RankIndex, read_within: float) -> None:
        try:
            async with asyncio.timeout(read_within):
                lag = await index.lag()
        except (RedisError, OSError, TimeoutError):
            self.lag_seconds.set(math.nan)
            self.in_sync.set(0)
            return
        ago = lag.get("caughtUpAgoMs")
        self.lag_seconds.set(math.nan if ago is None else ago / 1000)
        self.in_sync.set(1 if lag.get("inSync") else 0)


class ChangeFeedMetrics:
    """What this process's change feed reader has received (see rankindex/feed.py)."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.notices = Counter(
            "leaderboard_change_feed_notices",
            "Change notices received from the feed.",
            registry=registry,
        )
        self.resyncs = Counter(
            "leaderboard_change_feed_resyncs",
            "Times the feed's reader lost its place and woke every watched board.",
            registry=registry,
        )
        self.delay_seconds = Histogram(
            "leaderboard_change_feed_delay_seconds",
            "Seconds from a written entry's change (its attainedAt) to its notice's arrival in "
            "this process: the change feed's lag.",
            buckets=(0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0),
            registry=registry,
        )

    def notice(self, delay: float | None) -> None:
        self.notices.inc()
        if delay is not None:
            self.delay_seconds.observe(delay)

    def resync(self) -> None:
        self.resyncs.inc()


class ResponseCacheMetrics:
    """What this process's response cache does (a recorder for resolvers/response_cache.py)."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.hits = Counter(
            "leaderboard_cache_hits",
            "Queries answered from the response cache.",
            registry=registry,
        )
        self.misses = Counter(
            "leaderboard_cache_misses",
            "Cacheable queries the response cache had no answer for (they ran).",
            registry=registry,
        )
        self.evictions = Counter(
            "leaderboard_cache_evictions",
            "Answers that left the response cache: changed, too old, or for room.",
            registry=registry,
        )
        self.bytes = Gauge(
            "leaderboard_cache_bytes",
            "Bytes of answers the response cache holds.",
            registry=registry,
            multiprocess_mode="livesum",
        )

    def cache_lookup(self, hit: bool) -> None:
        (self.hits if hit else self.misses).inc()

    def cache_evicted(self, count: int) -> None:
        self.evictions.inc(count)

    def cache_bytes(self, total: int) -> None:
        self.bytes.set(total)


class MetricsAccess:
    """Who may scrape: a caller presenting one of ``keys`` as ``Authorization: Bearer``, or a
    client on a loopback address that came through no proxy."""

    def __init__(self, keys: Iterable[str], trusted_proxy_hops: int) -> None:
        self._keys = [k.encode() for k in keys if k]
        self.trusted_proxy_hops = trusted_proxy_hops

    def allows(self, request: web.Request) -> bool:
        return self._has_key(request.headers.get("Authorization")) or self._is_local(request)

    def _has_key(self, authorization: str | None) -> bool:
        """Every key is compared, in constant time, whatever the outcome."""
        if not authorization or authorization[: len(_BEARER)].lower() != _BEARER:
            return False
        try:
            presented = authorization[len(_BEARER) :].strip().encode()
        except UnicodeEncodeError:
            return False
        matches = [hmac.compare_digest(presented, key) for key in self._keys]
        return any(matches)

    def _is_local(self, request: web.Request) -> bool:
        if not self.trusted_proxy_hops and any(h in request.headers for h in _FORWARDING_HEADERS):
            return False  # a proxy on this host forwarded it: the client is elsewhere
        try:
            address = ipaddress.ip_address(client_address(request, self.trusted_proxy_hops))
        except ValueError:
            return False
        return address.is_loopback


METRICS = web.AppKey("metrics", Metrics)


def add_metrics_route(
    app: web.Application, metrics: Metrics, access: MetricsAccess, *, rank_index_timeout: float
) -> None:
    """Serve ``metrics`` at ``GET /metrics`` to the callers ``access`` allows; 403 to others."""
    app[METRICS] = metrics

    async def scrape(request: web.Request) -> web.StreamResponse:
        if not access.allows(request):
            return web.Response(status=403, text="forbidden\n")
        body = await metrics.render(request.app.get(RANK_INDEX), rank_index_timeout)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/metrics", scrape)


@contextlib.contextmanager
def pooled_metrics() -> Iterator[None]:
    """For a pool of worker processes: the directory of ``PROMETHEUS_MULTIPROC_DIR`` if it is
    set, else an empty one made for this run (and removed after it), so that a scrape of any
    worker reports the whole pool."""
    if os.environ.get(MULTIPROCESS_DIR):
        yield
        return
    directory = tempfile.mkdtemp(prefix="leaderboard-metrics-")
    os.environ[MULTIPROCESS_DIR] = directory
    # prometheus-client chooses how metrics keep their values when it is imported, which
    # was before the directory existed: choose again (no metric has been made yet).
    values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        os.environ.pop(MULTIPROCESS_DIR, None)
        values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]
        shutil.rmtree(directory, ignore_errors=True)


def process_exited(pid: int) -> None:
    """In multiprocess mode, forget the gauges of a process that has ended (a process manager
    calls this when a worker exits), so that live sums count only running processes."""
    directory = os.environ.get(MULTIPROCESS_DIR)
    if directory:
        mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
