"""Final results pushed to the game: signed webhooks, from the outbox in the table.

``leaderboard deliver-webhooks`` (:func:`deliver`) takes the oldest board of the webhook
outbox (dynamo/deliveries.py), strictly in close order, so that a player's results arrive in
the order their boards closed, and POSTs its results in batches of up to :data:`BATCH_SIZE`,
in position order, as JSON, signed the Standard Webhooks way (:func:`signature`):

- a board is sent from :data:`SETTLE` after its close on (the results are read from GSI2,
  eventually consistent), and a batch only once the results read are every position it
  spans; a position still missing :data:`GAP_PATIENCE` after the close is a result erased
  with its player since, and the batch goes without it;
- a 2xx answer moves the board's ``delivered`` on; any other answer, no answer within the
  timeout, or no connection, records the failure and sends the same batch again after
  :func:`retry_delay` (1 s doubling to 10 minutes, with jitter), for as long as it takes;
- a batch's ``webhook-id`` is ``<leaderboardId>:<firstPosition>-<lastPosition>``, the same
  every time it is sent, and its body is the same too; each result has its own ``id``,
  ``<leaderboardId>:<playerId>``. The state is the Delivery item's alone, so a deliverer
  restarted anywhere sends again at most the batch it had in flight, as it was.

While it runs (without ``--once``), the deliverer also prints, every :data:`METRICS_EVERY`,
the outbox's state as one CloudWatch Embedded Metric Format line (:class:`OutboxGauge`): the
age of its oldest pending board, the boards pending and the failures in a row of the head's
batch, which CloudWatch Logs turns into metrics (deploy/template.yaml alarms on the age).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import logging
import random
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TextIO

import aiohttp
from botocore.exceptions import BotoCoreError, ClientError

from dynamo.db import Db
from dynamo.deliveries import (
    DELIVERY,
    DeliveryItem,
    get_delivery,
    pending_deliveries,
    record_delivered,
    record_failure,
    results_between,
)
from dynamo.items import now, stamp
from dynamo.reads import count
from dynamo.results import ResultItem
from dynamo.table import GSI1
from leaderboard.backend import Backend, open_table
from leaderboard.config import Settings

__all__ = [
    "BATCH_SIZE",
    "EVENT_TYPE",
    "GAP_PATIENCE",
    "HEAD_ATTEMPTS_METRIC",
    "LONGEST_RETRY",
    "METRICS_EVERY",
    "METRIC_DIMENSION",
    "METRIC_NAMESPACE",
    "OLDEST_AGE_METRIC",
    "PENDING_METRIC",
    "SETTLE",
    "Attempt",
    "OutboxGauge",
    "WebhookTarget",
    "batch_id",
    "body_of",
    "deliver",
    "deliver_webhooks",
    "outbox_gauge",
    "retry_delay",
    "signature",
    "signing_key",
]

BATCH_SIZE = 100
"""Results in one webhook, at most."""
EVENT_TYPE = "leaderboard.results"
"""The ``type`` of every webhook's body."""
SETTLE = timedelta(seconds=10)
"""How long after its close a board's results are first read for sending: long enough for
GSI2 (eventually consistent, a second or so behind the table) to hold them all."""
GAP_PATIENCE = timedelta(minutes=5)
"""How long after its close a batch waits for a position missing from GSI2; past it the
position is taken as erased (its player's partition deleted) and the batch goes without it."""
GAP_RECHECK = 1.0
"""Seconds between two reads of a batch that had a position missing."""
FIRST_RETRY = 1.0
"""Seconds (before jitter) between a batch's first failure and its next attempt."""
LONGEST_RETRY = 600.0
"""The most seconds (before jitter) between two attempts of a batch."""
IDLE_POLL = 5.0
"""The most seconds the deliverer waits before it reads the outbox again."""
_LOOKAHEAD = 10
"""Delivery items listed per read of the outbox (the first still pending is the head)."""
_ERROR_CHARACTERS = 300
"""Characters of an error (or of a refusal's body) kept in ``lastError``."""
METRIC_NAMESPACE = "Leaderboard"
"""The CloudWatch namespace of the deliverer's metrics."""
METRIC_DIMENSION = "Table"
"""The metrics' one dimension, whose value is the table's name: the deliverers of two
deployments in one account and region report apart."""
OLDEST_AGE_METRIC = "WebhookOutboxOldestAgeSeconds"
"""Seconds since the oldest pending board of the outbox closed; 0 with the outbox empty."""
PENDING_METRIC = "WebhookOutboxPending"
"""Boards in the outbox: closed boards with results still to deliver."""
HEAD_ATTEMPTS_METRIC = "WebhookHeadAttempts"
"""Failed attempts in a row of the oldest pending board's next batch; 0 with none."""
METRICS_EVERY = 60.0
"""Seconds between two readings of the outbox for its metrics, at least: the first after the
deliverer's first look at the outbox, each other after the attempt or the wait under way."""

log = logging.getLogger("leaderboard")

Clock = Callable[[], datetime]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class WebhookTarget:
    """Where webhooks go and how they are signed."""

    url: str
    key: bytes = b""
    """The signing key's bytes (see :func:`signing_key`)."""
    timeout: float = 10.0
    """Seconds one POST may take, from connecting to the end of the answer."""

    @classmethod
    def of(cls, settings: Settings) -> WebhookTarget | None:
        """The target ``settings`` configure; None without a webhook URL. ValueError for a
        secret that is not one."""
        if settings.webhook_url is None:
            return None
        if settings.webhook_secret is None:
            raise ValueError(
                "LEADERBOARD_WEBHOOK_URL is set: LEADERBOARD_WEBHOOK_SECRET must be too"
            )
        return cls(
            settings.webhook_url,
            signing_key(settings.webhook_secret),
            settings.webhook_timeout_seconds,
        )


def signing_key(secret: str) -> bytes:
    """The key of a configured secret: ``whsec_<base64>`` is the base64's bytes (the Standard
    Webhooks form), any other text its UTF-8 bytes."""
    if not secret.startswith("whsec_"):
        return secret.encode()
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error:
        raise ValueError("a webhook secret beginning whsec_ must go on in base64") from None
    if not key:
        raise ValueError("a webhook secret beginning whsec_ must hold a key after it")
    return key


def signature(key: bytes, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header: ``v1,`` and the base64 of the HMAC-SHA256, under
    ``key``, of ``<webhook-id>.<webhook-timestamp>.<body>``."""
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def retry_delay(attempts: int, rng: Callable[[], float] = random.random) -> float:
    """Seconds from a batch's failure to its next attempt, ``attempts`` failures in a row so
    far (1 or more): at random between half and all of 1 s * 2^(attempts - 1), at most
    10 minutes (LONGEST_RETRY)."""
    doublings: int = min(max(attempts, 1) - 1, 30)
    ceiling = min(LONGEST_RETRY, FIRST_RETRY * float(2**doublings))
    return ceiling * (0.5 + 0.5 * rng())


def batch_id(leaderboard_id: str, first: int, last: int) -> str:
    """A batch's ``webhook-id``: the board and the positions it spans."""
    return f"{leaderboard_id}:{first}-{last}"


def body_of(delivery: DeliveryItem, results: Sequence[ResultItem]) -> bytes:
    """A batch's body (compact JSON): the board, its entrants and the results, in position
    order. The same results give the same bytes, every time."""
    document = {
        "type": EVENT_TYPE,
        "leaderboardId": delivery.leaderboard_id,
        "total": delivery.total,
        "results": [_result(r) for r in results],
    }
    return json.dumps(document, separators=(",", ":")).encode()


def _result(result: ResultItem) -> dict[str, Any]:
    return {
        "id": f"{result.leaderboard_id}:{result.player_id}",
        "playerId": result.player_id,
        "position": result.position,
        "rank": result.rank,
        "total": result.total,
        "percentile": result.percentile,
        "score": result.score,
        "attainedAt": stamp(result.attained_at),
        "rewardId": result.reward_id,
        "rewardQuantity": result.reward_quantity,
    }


@dataclass(frozen=True)
class Attempt:
    """One batch sent (or passed over, every result of it erased), and how it went."""

    leaderboard_id: str
    first: int
    last: int
    total: int
    sent: int
    """Results in the batch."""
    status: int | None = None
    """The HTTP status of the answer, when there was one."""
    error: str | None = None
    """None when the receiver acknowledged the batch."""
    attempt: int = 1
    """Which attempt of the batch this was."""
    retry_in: float | None = None
    """After a failure, seconds until the batch is sent again."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def webhook_id(self) -> str:
        return batch_id(self.leaderboard_id, self.first, self.last)

    def __str__(self) -> str:
        span = f"{self.leaderboard_id} {self.first}-{self.last} of {self.total}"
        if self.ok and self.sent == 0:
            return f"passed {span}: no result left in it"
        if self.ok:
            return f"delivered {span} ({self.sent} results, HTTP {self.status})"
        again = f"; again in {self.retry_in:.1f} s" if self.retry_in is not None else ""
        return f"failed {span} (attempt {self.attempt}): {self.error}{again}"


@dataclass(frozen=True)
class OutboxGauge:
    """The outbox as the deliverer read it at ``at``: what its metrics report."""

    at: datetime
    pending: int
    """Boards in the outbox (the index's count, a moment behind the table)."""
    oldest_age: float
    """Seconds from the close of the oldest pending board to ``at``; 0 with none."""
    head_attempts: int
    """Failed attempts in a row of the oldest pending board's next batch; 0 with none."""

    def emf(self, table: str) -> str:
        """The gauge as one line of CloudWatch Embedded Metric Format (compact JSON): the
        three metrics, in :data:`METRIC_NAMESPACE`, with the dimension :data:`METRIC_DIMENSION`
        set to ``table``, at ``at`` (epoch milliseconds)."""
        document = {
            "_aws": {
                "Timestamp": int(self.at.timestamp() * 1000),
                "CloudWatchMetrics": [
                    {
                        "Namespace": METRIC_NAMESPACE,
                        "Dimensions": [[METRIC_DIMENSION]],
                        "Metrics": [
                            {"Name": OLDEST_AGE_METRIC, "Unit": "Seconds"},
                            {"Name": PENDING_METRIC, "Unit": "Count"},
                            {"Name": HEAD_ATTEMPTS_METRIC, "Unit": "Count"},
                        ],
                    }
                ],
            },
            METRIC_DIMENSION: table,
            OLDEST_AGE_METRIC: self.oldest_age,
            PENDING_METRIC: self.pending,
            HEAD_ATTEMPTS_METRIC: self.head_attempts,
        }
        return json.dumps(document, separators=(",", ":"))


async def outbox_gauge(db: Db, at: datetime) -> OutboxGauge:
    """Read the outbox for its metrics: its head (as :func:`deliver` finds it) and a count of
    its boards (one Query of the index with Select COUNT, a page per 1 MB)."""
    head = await _head(db)
    ipk, _ = DELIVERY.indexes[GSI1]
    pending = await count(db, key_condition="gsi1pk = :pk", values={":pk": ipk.fill()}, index=GSI1)
    if head is None:
        return OutboxGauge(at, pending, 0.0, 0)
    age = max(0.0, (at - head.closed_at).total_seconds())
    return OutboxGauge(at, max(pending, 1), age, head.attempts)


async def deliver(
    db: Db,
    target: WebhookTarget,
    *,
    clock: Clock = now,
    sleep: Sleep = asyncio.sleep,
    once: bool = False,
    stop: asyncio.Event | None = None,
    report: Callable[[Attempt], None] | None = None,
    rng: Callable[[], float] = random.random,
    gauge: Callable[[OutboxGauge], None] | None = None,
    gauge_every: float = METRICS_EVERY,
) -> None:
    """Deliver the outbox, board after board in close order, until ``stop`` is set (for ever
    without one); with ``once``, until the outbox is empty or its oldest board is not due
    (waiting for its settling, its next attempt or a missing position). Each batch sent (or
    passed over) is given to ``report``; with ``gauge``, the outbox is read for its metrics
    (:func:`outbox_gauge`) after the first look at it and then once ``gauge_every`` seconds
    have passed since the last reading, and each reading is given to ``gauge``. ``clock`` and
    ``sleep`` are the deliverer's time: every wait goes through ``sleep``. A failure of the
    table is waited out (retry_delay) and the deliverer goes on; with ``once`` it is raised."""
    tell = report or (lambda _: None)
    timeout = aiohttp.ClientTimeout(total=target.timeout)
    table_failures = 0
    measured: datetime | None = None
    async with aiohttp.ClientSession(timeout=timeout) as session:
        while stop is None or not stop.is_set():
            try:
                wait = await _step(db, target, session, clock, tell, rng)
                table_failures = 0
                at = clock()
                if gauge is not None and (
                    measured is None or (at - measured).total_seconds() >= gauge_every
                ):
                    measured = at
                    gauge(await outbox_gauge(db, at))
            except (BotoCoreError, ClientError) as error:
                if once:
                    raise
                table_failures += 1
                wait = retry_delay(table_failures, rng)
                log.warning("webhook outbox: the table failed (%s); again in %.1f s", error, wait)
            if wait is None:
                continue
            if once:
                return
            await _pause(wait, sleep, stop)


async def _step(
    db: Db,
    target: WebhookTarget,
    session: aiohttp.ClientSession,
    clock: Clock,
    tell: Callable[[Attempt], None],
    rng: Callable[[], float],
) -> float | None:
    """One move of the outbox's head: None when something was sent or recorded (go on at
    once), else the seconds to wait before the next look."""
    at = clock()
    delivery = await _head(db)
    if delivery is None:
        return IDLE_POLL
    ready = delivery.closed_at + SETTLE
    if delivery.next_attempt_at is not None:
        ready = max(ready, delivery.next_attempt_at)
    if ready > at:
        return min(IDLE_POLL, (ready - at).total_seconds())
    first = delivery.delivered + 1
    last = min(delivery.delivered + BATCH_SIZE, delivery.total)
    results = await results_between(db, delivery.leaderboard_id, first, last)
    complete = [r.position for r in results] == list(range(first, last + 1))
    if not complete and at < delivery.closed_at + GAP_PATIENCE:
        return GAP_RECHECK
    attempt = Attempt(
        delivery.leaderboard_id,
        first,
        last,
        delivery.total,
        len(results),
        attempt=1 + delivery.attempts,
    )
    if not results:
        await record_delivered(db, delivery, last, status=None, at=at)
        tell(attempt)
        return None
    webhook_id = attempt.webhook_id
    body = body_of(delivery, results)
    timestamp = int(clock().timestamp())
    headers = {
        "content-type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(target.key, webhook_id, timestamp, body),
    }
    status, error = await _post(session, target, headers, body)
    answered = clock()
    if error is None:
        assert status is not None
        await record_delivered(db, delivery, last, status=status, at=answered)
        tell(replace(attempt, status=status))
        return None
    retry = retry_delay(attempt.attempt, rng)
    await record_failure(
        db,
        delivery,
        status=status,
        error=error,
        next_attempt_at=answered + timedelta(seconds=retry),
    )
    tell(replace(attempt, status=status, error=error, retry_in=retry))
    return None


async def _head(db: Db) -> DeliveryItem | None:
    """The oldest pending Delivery item, read consistently (the index may still list one
    delivered a moment ago: it is passed over)."""
    for listed in await pending_deliveries(db, _LOOKAHEAD):
        fresh = await get_delivery(db, listed.leaderboard_id)
        if fresh is not None and fresh.pending:
            return fresh
    return None


async def _post(
    session: aiohttp.ClientSession, target: WebhookTarget, headers: dict[str, str], body: bytes
) -> tuple[int | None, str | None]:
    """POST one batch: (the status, if any answer came; None for a 2xx answer, else what went
    wrong)."""
    try:
        async with session.post(
            target.url, data=body, headers=headers, allow_redirects=False
        ) as response:
            if 200 <= response.status < 300:
                return response.status, None
            start = await response.content.read(_ERROR_CHARACTERS)
            said = start.decode(errors="replace").strip()
            return response.status, _cut(f"HTTP {response.status}" + (f": {said}" if said else ""))
    except TimeoutError:
        return None, f"no answer within {target.timeout:g} s"
    except (aiohttp.ClientError, OSError) as error:
        return None, _cut(f"{type(error).__name__}: {error}")


def _cut(text: str) -> str:
    return " ".join(text.split())[:_ERROR_CHARACTERS]


async def _pause(seconds: float, sleep: Sleep, stop: asyncio.Event | None) -> None:
    """``sleep(seconds)``, cut short when ``stop`` is set."""
    if stop is None:
        await sleep(seconds)
        return
    if stop.is_set():
        return
    napping = asyncio.ensure_future(sleep(seconds))
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait((napping, stopping), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (napping, stopping):
            task.cancel()
        await asyncio.gather(napping, stopping, return_exceptions=True)


async def deliver_webhooks(
    settings: Settings,
    backend: Backend,
    *,
    once: bool,
    out: TextIO | None = None,
    err: TextIO | None = None,
    clock: Clock = now,
) -> int:
    """``leaderboard deliver-webhooks``: :func:`deliver` until SIGINT or SIGTERM (the attempt
    in flight ends first, within its timeout), or with ``once`` until nothing is due; a line
    on ``out`` per batch and, without ``once``, the outbox's metrics on ``out`` every
    :data:`METRICS_EVERY` (:meth:`OutboxGauge.emf`). The exit status: 1 without a webhook URL
    or with a bad secret, and with ``once`` after a failure of the table."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        target = WebhookTarget.of(settings)
    except ValueError as error:
        print(f"LEADERBOARD_WEBHOOK_SECRET: {error}", file=err, flush=True)
        return 1
    if target is None:
        print("LEADERBOARD_WEBHOOK_URL is not set: there is nowhere to deliver", file=err)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    attempts = 0

    def show(attempt: Attempt) -> None:
        nonlocal attempts
        attempts += 1
        print(attempt, file=out, flush=True)

    def publish(gauge: OutboxGauge) -> None:
        print(gauge.emf(settings.table), file=out, flush=True)

    try:
        async with open_table(settings, backend.credentials) as db:
            if not once:
                print(
                    f"delivering the webhook outbox of {settings.table} to {target.url}", file=out
                )
            await deliver(
                db,
                target,
                clock=clock,
                once=once,
                stop=stop,
                report=show,
                gauge=None if once else publish,
            )
    except (BotoCoreError, ClientError) as error:
        print(f"the table failed: {error}", file=err, flush=True)
        return 1
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.remove_signal_handler(sig)
    if once and not attempts:
        print("nothing due", file=out, flush=True)
    return 0
