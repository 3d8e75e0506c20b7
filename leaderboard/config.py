"""Service settings, read from the environment the way the AWS SDKs read theirs."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

__all__ = ["DEFAULT_CACHE_MB", "VARIABLES", "Limits", "Settings", "Variable", "default_cache_dir"]

MB = 1024 * 1024
DEFAULT_CACHE_MB = 64
"""The response cache's size, in megabytes, when a Redis URL is set and LEADERBOARD_CACHE_MB
is not."""


def default_cache_dir() -> Path:
    """Where pinned downloads are kept: LEADERBOARD_CACHE_DIR, else the user's cache folder."""
    configured = os.environ.get("LEADERBOARD_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "leaderboard-service"


@dataclass(frozen=True)
class Limits:
    """What one caller can make one process spend. Each can be set from the environment as
    ``LEADERBOARD_LIMIT_<NAME>`` (``LEADERBOARD_LIMIT_REQUEST_DEADLINE=5``). The limits of a
    document itself (tokens, depth, aliases, cost) belong to the edge's checks of documents: see
    edge/limits.py."""

    request_deadline: float = 10.0
    """Seconds an operation may run, on any transport; past it no further database call is
    made and the answer is BACKEND_UNAVAILABLE (HTTP 503)."""
    max_dynamodb_calls: int = 1000
    """Database calls one operation (or one push of a subscription) may make: the backstop
    behind the cost limit. A point of cost stands for at most one call on boards of one
    partition, so a document within the cost limit (1000) reading only those never reaches it;
    a page, a window or a COUNT rank of a write-sharded board makes one call per partition."""
    max_dynamodb_in_flight: int = 4
    """Database calls of one operation awaiting their answers at once; its other calls wait
    their turn, so that one operation's fan-out neither holds the client's pool of 64
    connections nor queues ahead of every other request's calls."""
    dynamodb_connect_timeout: float = 1.0
    """Seconds one attempt of a database call may take to connect."""
    dynamodb_read_timeout: float = 3.0
    """Seconds one attempt of a database call may wait for its answer. DynamoDB answers in
    milliseconds; an attempt silent this long is given up and retried (a write's outcome is
    then unknown until a retry with the same token settles it)."""
    max_body_bytes: int = 1 << 20
    """Request bodies larger than this are refused with 413."""
    body_timeout: float = 10.0
    """Seconds a client may take to send a request's body; past it the answer is 408 and the
    connection is closed."""
    head_timeout: float = 15.0
    """Seconds a connection may wait for a complete request line and headers, counted from
    its opening or from the end of its previous answer: a slow head is closed then, and so is
    a keep-alive connection idle that long."""
    max_concurrent_requests: int = 32
    """Operations executing at once in the process; more wait for a place."""
    queue_timeout: float = 5.0
    """Seconds an operation waits for a place before it is refused with SERVICE_OVERLOADED
    (HTTP 503, Retry-After); the wait counts toward the request's deadline. Long enough for a
    burst of writes contending for one player to pass, short of the deadline."""
    max_cost_in_flight: int = 2000
    """Points of cost (edge/cost_model.py) executing at once in the process, at least the most one
    document may cost (1000): two of the heaviest documents, or hundreds of small ones; a
    document waits for room like for a place (queue_timeout)."""
    anonymous_cost_per_second: float = 100.0
    """Cost points an anonymous client address regains each second (see edge/cost_model.py)."""
    anonymous_cost_burst: int = 2000
    """Cost points an anonymous client address may spend at once."""
    tracked_clients: int = 10_000
    """Client addresses whose allowances are remembered; the least recently seen are
    forgotten first."""
    max_websockets: int = 1000
    """Open WebSocket connections in the process."""
    max_websockets_per_client: int = 16
    """Open WebSocket connections from one client address."""
    max_subscriptions: int = 2000
    """Running subscriptions in the process."""
    max_subscriptions_per_socket: int = 10
    """Running operations on one WebSocket connection."""
    connection_init_timeout: float = 5.0
    """Seconds a WebSocket client has to send connection_init."""
    max_socket_buffer_bytes: int = 1 << 20
    """Bytes waiting to be sent on one WebSocket; a consumer that falls further behind is
    disconnected rather than buffered."""
    socket_send_timeout: float = 10.0
    """Seconds one message may take to be handed to a WebSocket; a consumer slower than that
    is disconnected."""
    socket_heartbeat: float = 30.0
    """Seconds between pings on a WebSocket; one that does not answer is closed."""
    trusted_proxy_hops: int = 0
    """Proxies (load balancers) in front of the service that append to X-Forwarded-For: the
    client's address is the one that many hops from the right. 0 uses the peer address."""
    rank_index_timeout: float = 1.0
    """Seconds a read of the rank index (Redis) may wait to connect or for an answer; past
    it, as on any other Redis failure, the table's COUNTs answer instead."""
    shutdown_timeout: float = 10.0
    """Seconds requests in flight have to finish once the process is asked to stop
    (SIGTERM); past it they are cut off. No new connection is accepted meanwhile."""

    @classmethod
    def from_env(cls) -> Limits:
        limits = cls()
        for spec in fields(cls):
            raw = os.environ.get(f"LEADERBOARD_LIMIT_{spec.name.upper()}")
            if raw:
                kind = type(getattr(limits, spec.name))
                limits = replace(limits, **{spec.name: kind(raw)})
        return limits


@dataclass(frozen=True)
class Settings:
    endpoint_url: str | None
    """A DynamoDB-compatible endpoint (DynamoDB Local, LocalStack, AWS). Unset, the embedded
    DynamoDB Local, which ``serve`` starts and fills with demo data. With an endpoint
    the table's stream is read at the same address, except at AWS's own, where the SDK finds
    the Streams endpoint."""
    region: str
    """The AWS region of the table."""
    table: str
    """The table's name; also the rank index's namespace in Redis."""
    cursor_secret: bytes
    """The key that signs pagination cursors (16 bytes or more): the same on every instance.
    Unset, each process makes a random one, and its cursors last as long as the process."""
    redis_url: str | None = None
    """The rank index's Redis (``redis://host:6379/0``), which also carries the change feed
    between instances. Unset, ranks are answered from the table's COUNT queries."""
    api_keys: tuple[str, ...] = ()
    """Game-server keys, comma-separated: may write and read private data (Authorization:
    Bearer <key>). None set, writes and private reads are refused."""
    admin_keys: tuple[str, ...] = ()
    """Admin keys, comma-separated: all a game-server key may do, and moderation and player
    data."""
    metrics_keys: tuple[str, ...] = ()
    """Keys, comma-separated, that may scrape /metrics and nothing else (admin keys may too)."""
    limits: Limits = field(default_factory=Limits)
    http_max_age: int = 1
    """Seconds a shared cache (a CDN) may serve a public answer, an anonymous GET query's,
    without asking again: short, since a board changes with every play."""
    http_stale_while_revalidate: int = 10
    """Seconds past that a shared cache may still serve it while it fetches a fresh one."""
    cache_mb: int | None = None
    """Megabytes of answers the process's response cache may hold; 0 turns it off. Unset, 64
    with a Redis URL (whose change feed keeps the cache exact across instances) and off
    without one."""
    cache_max_seconds: int = 30
    """Seconds an answer may be served from the response cache at most, whatever the
    change feed says; 0 turns the cache off."""
    subscription_refresh_seconds: int = 30
    """Seconds a watched board may go without a change notice before its subscribers re-read
    it anyway, whatever the change feed says; 0 leaves subscribers to the notices alone."""
    close_grace_seconds: int = 60
    """Seconds after a board's ``endsAt`` from which ``leaderboard close-periods`` closes it
    (its --grace): longer than a play may take (the request deadline), so that every play
    admitted before the end has committed or failed, with room for the clocks of the
    service's instances to differ."""
    webhook_url: str | None = None
    """Where ``leaderboard deliver-webhooks`` POSTs the final results of closed boards (an
    http or https URL); set, ``leaderboard close-periods`` puts each board it closes with at
    least one entrant in the webhook outbox. Unset, no webhooks: the outbox stays empty."""
    webhook_secret: str | None = field(default=None, repr=False)
    """The key that signs the webhooks (their ``webhook-signature``, Standard Webhooks):
    ``whsec_`` followed by base64, as the Standard Webhooks libraries take it, or any other
    text, whose UTF-8 bytes are the key. Required with a webhook URL."""
    webhook_timeout_seconds: float = 10.0
    """Seconds one POST of a webhook may take, from connecting to the end of the answer; past
    it the attempt has failed and its batch is sent again later."""
    peers_dir: Path | None = None
    """Where the workers of one ``serve --workers N`` master find each other's sockets (set
    by the master for its workers, never from the environment); None for a process that
    serves alone."""

    @property
    def cache_bytes(self) -> int:
        """The response cache's bound in bytes (0: no cache)."""
        if self.cache_max_seconds <= 0:
            return 0
        if self.cache_mb is None:
            return DEFAULT_CACHE_MB * MB if self.redis_url else 0
        return self.cache_mb * MB

    @classmethod
    def from_env(cls, *, endpoint_url: str | None = None, table: str | None = None) -> Settings:
        env = os.environ
        secret = env.get("LEADERBOARD_CURSOR_SECRET")
        webhook_url, webhook_secret, webhook_timeout = _webhook_settings(
            cls.webhook_timeout_seconds
        )
        return cls(
            endpoint_url=endpoint_url or env.get("AWS_ENDPOINT_URL_DYNAMODB") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            table=table or env.get("LEADERBOARD_TABLE") or "leaderboard",
            # Without a configured secret, cursors are valid for the life of the process only.
            cursor_secret=secret.encode() if secret else secrets.token_bytes(32),
            redis_url=env.get("LEADERBOARD_REDIS_URL") or None,
            api_keys=_keys(env.get("LEADERBOARD_API_KEYS", "")),
            admin_keys=_keys(env.get("LEADERBOARD_ADMIN_KEYS", "")),
            metrics_keys=_keys(env.get("LEADERBOARD_METRICS_KEYS", "")),
            limits=Limits.from_env(),
            http_max_age=_seconds("LEADERBOARD_HTTP_MAX_AGE", cls.http_max_age),
            http_stale_while_revalidate=_seconds(
                "LEADERBOARD_HTTP_STALE_WHILE_REVALIDATE", cls.http_stale_while_revalidate
            ),
            cache_mb=_whole("LEADERBOARD_CACHE_MB", "megabytes")
            if env.get("LEADERBOARD_CACHE_MB", "").strip()
            else None,
            cache_max_seconds=_seconds("LEADERBOARD_CACHE_MAX_SECONDS", cls.cache_max_seconds),
            subscription_refresh_seconds=_seconds(
                "LEADERBOARD_SUBSCRIPTION_REFRESH_SECONDS", cls.subscription_refresh_seconds
            ),
            close_grace_seconds=_seconds(
                "LEADERBOARD_CLOSE_GRACE_SECONDS", cls.close_grace_seconds
            ),
            webhook_url=webhook_url,
            webhook_secret=webhook_secret,
            webhook_timeout_seconds=webhook_timeout,
        )


def _webhook_settings(default_timeout: float) -> tuple[str | None, str | None, float]:
    """The webhook settings from the environment: a URL requires a secret, and the timeout is
    a number of seconds above 0."""
    url = os.environ.get("LEADERBOARD_WEBHOOK_URL", "").strip() or None
    secret = os.environ.get("LEADERBOARD_WEBHOOK_SECRET", "").strip() or None
    if url is not None and not url.lower().startswith(("http://", "https://")):
        raise ValueError(f"LEADERBOARD_WEBHOOK_URL must be an http or https URL, not {url!r}")
    if url is not None and secret is None:
        raise ValueError("LEADERBOARD_WEBHOOK_URL is set: LEADERBOARD_WEBHOOK_SECRET must be too")
    raw = os.environ.get("LEADERBOARD_WEBHOOK_TIMEOUT_SECONDS", "").strip()
    try:
        timeout = float(raw) if raw else default_timeout
    except ValueError:
        timeout = -1.0
    if not 0 < timeout < float("inf"):
        raise ValueError(
            f"LEADERBOARD_WEBHOOK_TIMEOUT_SECONDS must be a number of seconds above 0, not {raw!r}"
        )
    return url, secret, timeout


def _keys(value: str) -> tuple[str, ...]:
    """A comma-separated list of keys, blanks dropped."""
    return tuple(k.strip() for k in value.split(",") if k.strip())


def _seconds(name: str, default: int) -> int:
    """A whole number of seconds, 0 or more, from the environment variable ``name``."""
    if not os.environ.get(name, "").strip():
        return default
    return _whole(name, "seconds")


def _whole(name: str, unit: str) -> int:
    """A whole number of ``unit``, 0 or more, from the set environment variable ``name``."""
    raw = os.environ.get(name, "").strip()
    if not (raw.isascii() and raw.isdigit()):
        raise ValueError(f"{name} must be a whole number of {unit}, 0 or more, not {raw!r}")
    return int(raw)


@dataclass(frozen=True)
class Variable:
    """An environment variable the service reads (the limits' aside: see :class:`Limits`)."""

    name: str
    setting: str | None = None
    """The field of :class:`Settings` it sets, whose docstring says what it means and whose
    value under an empty environment is its default."""
    meaning: str = ""
    """What it means, for a variable read outside :class:`Settings`."""
    default: str | None = None
    """What applies while it is unset, where the field's value does not say it."""


VARIABLES = (
    Variable("AWS_ENDPOINT_URL_DYNAMODB", "endpoint_url", default="the embedded DynamoDB Local"),
    Variable(
        "AWS_ENDPOINT_URL_DYNAMODB_STREAMS",
        meaning="The endpoint of the table's stream, read by the AWS SDK itself, where the "
        "service reads it from AWS's own DynamoDB endpoint (elsewhere the stream is read at "
        "AWS_ENDPOINT_URL_DYNAMODB).",
        default="the SDK's endpoint for the region",
    ),
    Variable(
        "AWS_CA_BUNDLE",
        meaning="A file of certificate authorities that TLS to an https endpoint is verified "
        "against, read by the AWS SDK and by the service's own connections to DynamoDB.",
        default="the bundle the AWS SDK ships",
    ),
    Variable("AWS_REGION", "region"),
    Variable(
        "AWS_DEFAULT_REGION",
        meaning="The AWS region of the table, where AWS_REGION is unset.",
        default="`us-east-1`",
    ),
    Variable("LEADERBOARD_TABLE", "table"),
    Variable("LEADERBOARD_CURSOR_SECRET", "cursor_secret", default="a random key per process"),
    Variable("LEADERBOARD_REDIS_URL", "redis_url"),
    Variable("LEADERBOARD_API_KEYS", "api_keys"),
    Variable("LEADERBOARD_ADMIN_KEYS", "admin_keys"),
    Variable("LEADERBOARD_METRICS_KEYS", "metrics_keys"),
    Variable("LEADERBOARD_HTTP_MAX_AGE", "http_max_age"),
    Variable("LEADERBOARD_HTTP_STALE_WHILE_REVALIDATE", "http_stale_while_revalidate"),
    Variable(
        "LEADERBOARD_CACHE_MB",
        "cache_mb",
        default=f"`{DEFAULT_CACHE_MB}` with a Redis URL, else `0`",
    ),
    Variable("LEADERBOARD_CACHE_MAX_SECONDS", "cache_max_seconds"),
    Variable("LEADERBOARD_SUBSCRIPTION_REFRESH_SECONDS", "subscription_refresh_seconds"),
    Variable("LEADERBOARD_CLOSE_GRACE_SECONDS", "close_grace_seconds"),
    Variable("LEADERBOARD_WEBHOOK_URL", "webhook_url"),
    Variable("LEADERBOARD_WEBHOOK_SECRET", "webhook_secret"),
    Variable("LEADERBOARD_WEBHOOK_TIMEOUT_SECONDS", "webhook_timeout_seconds"),
    Variable(
        "LEADERBOARD_WORKERS",
        meaning="Worker processes of `leaderboard serve` on its port (its --workers).",
        default="one per core with an endpoint, one with the embedded backends",
    ),
    Variable(
        "LEADERBOARD_DATA_DIR",
        meaning="Where the embedded DynamoDB Local keeps its data (the commands' --data-dir); "
        "the embedded Redis keeps its own beside it.",
        default="`.data/dynamodb`",
    ),
    Variable(
        "LEADERBOARD_CACHE_DIR",
        meaning="Where pinned downloads (DynamoDB Local, GraphiQL's files) are unpacked; an "
        "installed wheel brings GraphiQL's files with it.",
        default="`$XDG_CACHE_HOME/leaderboard-service`, else `~/.cache/leaderboard-service`",
    ),
    Variable(
        "LEADERBOARD_LOG_FORMAT",
        meaning="The log's format on stderr: json (one object a line) or text.",
        default="`json`",
    ),
    Variable(
        "PROMETHEUS_MULTIPROC_DIR",
        meaning="An empty directory where several processes pool their metrics "
        "(prometheus-client's multiprocess mode); `serve --workers N` makes one for its run "
        "when it is unset.",
        default="each process reports its own metrics",
    ),
)
"""Every environment variable the service reads, in the order the reference lists them; the
limits add one each, ``LEADERBOARD_LIMIT_<NAME>``."""
