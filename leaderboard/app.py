"""The aiohttp application: routes, and the DynamoDB client owned by the app's lifecycle."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import TypedDict

import aiobotocore
import botocore
from aiobotocore.config import AioConfig
from aiohttp import web
from botocore.exceptions import BotoCoreError, ClientError
from redis.asyncio import Redis
from redis.exceptions import RedisError

from dynamo import outcomes
from dynamo.db import Db
from dynamo.errors import LeaderboardError
from dynamo.items import now
from dynamo.metrics import CallCounter
from dynamo.resilience import CircuitBreaker
from edge.admission import Admission
from edge.app_keys import API_KEYS, BROKER, CLOCK, DB, RANK_INDEX, RESPONSES
from edge.auth import ApiKeys
from edge.cost_model import MAX_COST
from edge.guards import Guards
from edge.http_cache import CachePolicy
from edge.sockets import SocketLimits, Sockets
from edge.throttle import Allowances
from edge.view import LeaderboardView
from leaderboard import loops
from leaderboard.backend import open_stream, open_table
from leaderboard.config import Limits, Settings
from leaderboard.drain import add_drain
from leaderboard.graphiql import DEFAULT_QUERY, add_graphiql_asset_route, graphiql_page
from leaderboard.headers import add_security_headers
from leaderboard.metrics import ChangeFeedMetrics, Metrics, MetricsAccess, add_metrics_route
from leaderboard.observability import request_context
from leaderboard.peers import WorkerPeers
from rankindex.feed import ChangeFeed, feed_client
from rankindex.index import RankIndex
from rankindex.lease import Lease
from rankindex.notices import Notice
from rankindex.projector import Projector
from rankindex.upgrade import Upgrader
from resolvers.broker import Broker, refresh_quiet_topics
from resolvers.changes import Arrivals
from resolvers.response_cache import ResponseCache

__all__ = [
    "ADMISSION",
    "ARRIVALS",
    "BREAKER",
    "CALLS",
    "FEED",
    "PEERS",
    "SOCKETS",
    "create_app",
    "server_options",
]

log = logging.getLogger("leaderboard")

CALLS = web.AppKey("calls", CallCounter)
BREAKER = web.AppKey("breaker", CircuitBreaker)
ADMISSION = web.AppKey("admission", Admission)
SOCKETS = web.AppKey("sockets", Sockets)
"""The process's WebSockets and subscriptions (their counts, for tests and health)."""
FEED = web.AppKey("feed", ChangeFeed)
"""The change feed's reader, with a Redis URL: add listeners to its notices here."""
ARRIVALS = web.AppKey("arrivals", Arrivals)
"""Where changes made through other processes arrive (from the feed and the siblings)."""
PEERS = web.AppKey("peers", WorkerPeers)
"""This worker's siblings, when it is one of several workers of a master."""

Prepare = Callable[[Db], Awaitable[None]]


USER_AGENT = f"leaderboard botocore/{botocore.__version__} aiobotocore/{aiobotocore.__version__}"
"""The User-Agent of the service's DynamoDB calls."""


def _client_config(limits: Limits) -> AioConfig:
    """Throttling, 5xx answers and dropped connections are retried with jittered backoff, a
    bounded number of times; a call that still fails counts against the circuit breaker.
    ``total_max_attempts`` counts the first attempt too (botocore's ``max_attempts`` in a
    client config counts only the retries)."""
    return AioConfig(
        retries={"mode": "standard", "total_max_attempts": 4},
        connect_timeout=limits.dynamodb_connect_timeout,
        read_timeout=limits.dynamodb_read_timeout,
        max_pool_connections=64,
        # Requests are built by dynamo/ from typed models and DynamoDB validates them itself;
        # botocore's walk over every parameter costs more than a percent of the service's CPU.
        parameter_validation=False,
        # A fixed User-Agent: botocore otherwise assembles and sanitises a dozen components
        # of it for every call.
        user_agent=USER_AGENT,
    )


def create_app(
    settings: Settings,
    *,
    graphiql_assets: Path | None = None,
    prepare: Prepare | None = None,
    credentials: tuple[str, str] | None = None,
    clock: Callable[[], datetime] = now,
    monotonic: Callable[[], float] = time.monotonic,
    project_ranks: bool = False,
) -> web.Application:
    """Build the application. ``prepare`` runs once the client exists, before serving (the
    embedded mode creates the table and loads demo data there); ``credentials`` overrides the
    AWS credential chain (DynamoDB Local accepts any); ``clock`` is the service's "now";
    ``monotonic`` (seconds) measures its intervals: the anonymous allowances' refill, the
    circuit's cooldown, the age of shared reads and of cached answers, the window in which
    its own writes are read consistently, a watched board's quiet before a refresh.
    With ``settings.redis_url`` the rank index answers ranks; ``project_ranks`` also runs
    its projector in this process (the embedded mode; on AWS a Lambda does it)."""
    limits = settings.limits
    app = web.Application(client_max_size=limits.max_body_bytes, middlewares=[request_context])
    add_security_headers(app)
    app[CLOCK] = clock
    app[API_KEYS] = ApiKeys(settings.api_keys, settings.admin_keys)
    app[BROKER] = Broker(clock=monotonic)
    metrics = Metrics(rank_index=bool(settings.redis_url))
    if settings.cache_bytes > 0:
        app[RESPONSES] = ResponseCache(
            settings.cache_bytes,
            max_age=settings.cache_max_seconds,
            clock=monotonic,
            recorder=metrics.response_cache,
        )
    app[ARRIVALS] = Arrivals(app[BROKER], app.get(RESPONSES))

    async def dynamodb(app: web.Application) -> AsyncIterator[None]:
        async with open_table(settings, credentials, config=_client_config(limits)) as db:
            client = db.client
            app[DB] = db
            app[CALLS] = CallCounter(client, on_call=metrics.dynamodb_call)
            app[BREAKER] = CircuitBreaker(clock=monotonic, on_change=metrics.circuit)
            app[BREAKER].attach(client)
            outcomes.attach(client)
            if prepare is not None:
                await prepare(db)
            yield

    app.on_startup.append(_announce_loop)
    app.cleanup_ctx.append(dynamodb)
    if settings.peers_dir is not None:
        app.cleanup_ctx.append(_worker_peers(settings.peers_dir))
    if settings.subscription_refresh_seconds > 0:
        app.cleanup_ctx.append(_refresh_subscriptions(settings.subscription_refresh_seconds))
    if settings.redis_url:
        app.cleanup_ctx.append(
            _rank_index(settings, credentials, project=project_ranks, metrics=metrics)
        )
    page = None
    if graphiql_assets is not None:
        add_graphiql_asset_route(app, graphiql_assets)
        page = graphiql_page(endpoint="/graphql", default_query=DEFAULT_QUERY)
    app[ADMISSION] = Admission(
        max_concurrent=limits.max_concurrent_requests,
        queue_timeout=limits.queue_timeout,
        capacity=max(limits.max_cost_in_flight, MAX_COST),
    )
    guards = Guards(
        deadline=limits.request_deadline,
        max_calls=limits.max_dynamodb_calls,
        max_in_flight=limits.max_dynamodb_in_flight,
        body_timeout=limits.body_timeout,
        admission=app[ADMISSION],
        allowances=Allowances(
            rate=limits.anonymous_cost_per_second,
            burst=limits.anonymous_cost_burst,
            tracked=limits.tracked_clients,
            clock=monotonic,
        ),
        trusted_proxy_hops=limits.trusted_proxy_hops,
        sockets=Sockets(
            SocketLimits(
                max_sockets=limits.max_websockets,
                max_sockets_per_client=limits.max_websockets_per_client,
                max_subscriptions=limits.max_subscriptions,
                max_operations_per_socket=limits.max_subscriptions_per_socket,
                init_timeout=limits.connection_init_timeout,
                max_buffer_bytes=limits.max_socket_buffer_bytes,
                send_timeout=limits.socket_send_timeout,
                max_message_bytes=limits.max_body_bytes,
                heartbeat=limits.socket_heartbeat,
            ),
            recorder=metrics,
        ),
        recorder=metrics,
    )
    app[SOCKETS] = guards.sockets
    add_drain(app, guards.sockets)
    cache = CachePolicy(settings.http_max_age, settings.http_stale_while_revalidate)
    view = LeaderboardView(graphiql_page=page, guards=guards, cache=cache)
    app.router.add_route("GET", "/graphql", view)
    app.router.add_route("POST", "/graphql", view)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/livez", livez)
    add_metrics_route(
        app,
        metrics,
        MetricsAccess(settings.metrics_keys + settings.admin_keys, limits.trusted_proxy_hops),
        rank_index_timeout=limits.rank_index_timeout,
    )
    return app


class ServerOptions(TypedDict):
    """Keyword arguments of ``web.run_app`` and ``web.AppRunner``."""

    keepalive_timeout: float
    lingering_time: float
    shutdown_timeout: float


LINGERING_TIME = 1.0
"""Seconds spent reading and discarding the unread rest of a body that was refused (408, 413)
before the connection is closed, so that the client reads the answer rather than a reset;
aiohttp's default (10 s) would hold a slow client ten seconds more."""


async def _announce_loop(_app: web.Application) -> None:
    log.info("event loop: %s", loops.running())


def server_options(limits: Limits) -> ServerOptions:
    """The HTTP server's own bounds, and how long requests in flight have to finish once it
    is stopped. aiohttp closes a connection still waiting for a complete request head when
    its keep-alive timer fires (set at the connection's opening and after each answer),
    which makes that timer the bound on a slow head as well as on an idle connection."""
    return ServerOptions(
        keepalive_timeout=limits.head_timeout,
        lingering_time=LINGERING_TIME,
        shutdown_timeout=limits.shutdown_timeout,
    )


def _rank_index(
    settings: Settings, credentials: tuple[str, str] | None, *, project: bool, metrics: Metrics
) -> Callable[[web.Application], AsyncIterator[None]]:
    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        # Requests read through a client that gives up quickly (a hung Redis must not hold
        # them: they fall back to the table); the projector writes through its own.
        timeout = settings.limits.rank_index_timeout
        redis = Redis.from_url(
            settings.redis_url or "", socket_timeout=timeout, socket_connect_timeout=timeout
        )
        app[RANK_INDEX] = RankIndex(redis, settings.table)
        stop = asyncio.Event()
        async with AsyncExitStack() as stack:
            stack.push_async_callback(redis.aclose)
            reader = _closing(stack, feed_client(settings.redis_url or ""))
            feed = ChangeFeed(reader, settings.table)
            if metrics.change_feed is not None:
                _measure_feed(feed, metrics.change_feed)
            stack.push_async_callback(_cancel, _follow_feed(app, feed, stop))
            if project:
                # Every process may run one: the lease lets one of them project at a time.
                writer = _closing(stack, Redis.from_url(settings.redis_url or ""))
                stream = await stack.enter_async_context(
                    open_stream(settings, credentials, app[DB])
                )
                index = RankIndex(writer, settings.table)
                lease = Lease(writer, settings.table)
                # Its holder also rebuilds the boards an earlier version indexed.
                upgrader = Upgrader(index, app[DB], lease)
                projector = Projector(stream, index, lease, upgrader=upgrader)
                task = asyncio.create_task(projector.run(stop))
            yield
            stop.set()
            if project:
                await task

    return lifecycle


def _refresh_subscriptions(quiet_for: int) -> Callable[[web.Application], AsyncIterator[None]]:
    """The backstop behind the change notices: a watched board quiet for ``quiet_for``
    seconds is re-read by its subscribers (see ``Broker.refresh``)."""

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        task = asyncio.create_task(refresh_quiet_topics(app[BROKER], quiet_for))
        yield
        await _cancel(task)

    return lifecycle


def _closing(stack: AsyncExitStack, redis: Redis) -> Redis:
    stack.push_async_callback(redis.aclose)
    return redis


async def _cancel(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` and wait for it, 10 s at most (the feed's reader is also told to stop
    by an event: should the cancellation be lost inside a client's own timeout handling, it
    still ends within a blocking read's wait)."""
    task.cancel()
    await asyncio.wait({task}, timeout=10)


def _follow_feed(app: web.Application, feed: ChangeFeed, stop: asyncio.Event) -> asyncio.Task[None]:
    """Start the change feed's reader: each notice evicts from the response cache what it
    may change and wakes the subscribers of its board, but for the copy of a change this
    process made or heard of from a sibling worker, which did both already; a lost place
    empties the cache and wakes every subscriber."""
    arrivals = app[ARRIVALS]
    feed.on_notice(arrivals.from_feed)
    feed.on_resync(arrivals.resync)
    responses = app.get(RESPONSES)
    if responses is not None:
        # While the reader is not connected (notices may be passing it by), nothing is
        # served from the cache or stored in it.
        responses.available = lambda: feed.connected
    app[FEED] = feed
    return asyncio.create_task(feed.run(stop))


def _worker_peers(directory: Path) -> Callable[[web.Application], AsyncIterator[None]]:
    """This worker's end of the mesh of its master's workers (leaderboard/peers.py): its
    writes go to its siblings as they commit, and theirs come to it."""

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        arrivals = app[ARRIVALS]
        peers = WorkerPeers(directory, on_notice=arrivals.from_sibling, on_resync=arrivals.resync)
        await peers.start()
        app[PEERS] = peers
        app[BROKER].peers = peers
        yield
        app[BROKER].peers = None
        await peers.stop()

    return lifecycle


def _measure_feed(feed: ChangeFeed, measured: ChangeFeedMetrics) -> None:
    def notice(notice: Notice) -> None:
        at = notice.at_ms
        measured.notice(None if at is None else max(0.0, time.time() - at / 1000))

    feed.on_notice(notice)
    feed.on_resync(measured.resync)


async def livez(request: web.Request) -> web.Response:
    """200 while the process serves HTTP, whatever its backends' state: what a load balancer
    or an orchestrator asks before it restarts a process. Replacing a process cannot mend an
    unreachable table, so that is left to ``/healthz`` and to alarms."""
    return web.json_response({"status": "alive", "pid": os.getpid()})


async def healthz(request: web.Request) -> web.Response:
    """200 once the table answers, 503 otherwise; with the rank index, how far behind it is,
    and what this process's change feed reader has seen; with a response cache, what it
    holds and how it has done; the id of the process that answered (one of several
    workers)."""
    db = request.app[DB]
    try:
        described = await db.client.describe_table(TableName=db.table)
    except (BotoCoreError, ClientError, LeaderboardError) as error:
        return web.json_response(
            {
                "status": "unavailable",
                "table": db.table,
                "error": type(error).__name__,
                "circuit": request.app[BREAKER].state,
            },
            status=503,
        )
    body: dict[str, object] = {
        "status": "ok",
        "table": db.table,
        "tableStatus": described["Table"].get("TableStatus"),
        "circuit": request.app[BREAKER].state,
        "pid": os.getpid(),
    }
    index = request.app.get(RANK_INDEX)
    if index is not None:
        try:
            body["rankIndex"] = await index.lag()
        except RedisError as error:
            body["rankIndex"] = {"inSync": False, "error": type(error).__name__}
    feed = request.app.get(FEED)
    if feed is not None:
        body["changeFeed"] = feed.status()
    peers = request.app.get(PEERS)
    if peers is not None:
        body["workers"] = peers.status()
    responses = request.app.get(RESPONSES)
    if responses is not None:
        body["responseCache"] = responses.status()
    return web.json_response(body)
