"""Final results pushed to the game (leaderboard/webhooks.py, dynamo/deliveries.py): a real
receiver on the loopback that is first down, then slow, then failing, then well, a deliverer
stopped in the middle and started again, and every result delivered at least once, each
resend the same, in close order and position order, every signature valid."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import io
import json
import random
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
from aiohttp import web

from dynamo.closing import close_board
from dynamo.deliveries import (
    DELIVERY,
    DeliveryItem,
    get_delivery,
    pending_deliveries,
    results_between,
)
from dynamo.items import now, serialize, stamp
from dynamo.layout import entity_of
from dynamo.results import RESULT, ResultItem
from leaderboard.backend import LOCAL_CREDENTIALS, Backend
from leaderboard.close_commands import close_periods
from leaderboard.config import Settings
from leaderboard.webhooks import (
    BATCH_SIZE,
    GAP_PATIENCE,
    HEAD_ATTEMPTS_METRIC,
    LONGEST_RETRY,
    METRIC_DIMENSION,
    METRIC_NAMESPACE,
    METRICS_EVERY,
    OLDEST_AGE_METRIC,
    PENDING_METRIC,
    SETTLE,
    Attempt,
    OutboxGauge,
    WebhookTarget,
    batch_id,
    deliver,
    deliver_webhooks,
    outbox_gauge,
    retry_delay,
    signature,
    signing_key,
)
from soak.invariants import snapshot
from tests.boards import T0, write_board
from tests.conftest import Table, serving_on_loopback
from tests.scan import scan_items

END = T0 + timedelta(days=1)
CLOSED = END + timedelta(minutes=5)
SECRET = "whsec_" + base64.b64encode(b"the receiver's own webhook key!").decode()
TIMEOUT = 1.0
"""The deliverer's per-request timeout in these tests (real seconds)."""
SLOW = 2.5 * TIMEOUT
"""How long the slow receiver takes to answer."""
WAIT = 120.0
"""The most real seconds a test waits for the deliverer to get somewhere."""


class Time:
    """The deliverer's clock and sleep: time moves only when the deliverer sleeps, so its
    backoff of minutes takes milliseconds."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    async def sleep(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)
        await asyncio.sleep(0.002)


@dataclass(frozen=True)
class Received:
    mode: str
    webhook_id: str
    timestamp: str
    signature: str
    body: bytes

    @property
    def document(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """A game's webhook endpoint: records every request, then answers as its mode says: slow
    (204 after SLOW), error (500) or ok (204; the first request of the batch ``hold`` is held
    until ``release``)."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.received: list[Received] = []
        self.hold: str | None = None
        self.held = asyncio.Event()
        self.release = asyncio.Event()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/hooks", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        mode = self.mode
        headers = request.headers
        self.received.append(
            Received(
                mode,
                headers["webhook-id"],
                headers["webhook-timestamp"],
                headers["webhook-signature"],
                body,
            )
        )
        if mode == "slow":
            await asyncio.sleep(SLOW)
        elif mode == "error":
            return web.Response(status=500, text="receiver failing")
        else:
            if self.hold == self.received[-1].webhook_id and not self.held.is_set():
                self.held.set()
                await self.release.wait()
        return web.Response(status=204)

    def count(self, mode: str) -> int:
        return sum(r.mode == mode for r in self.received)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def _listening(app: web.Application, port: int) -> AsyncIterator[None]:
    runner = web.AppRunner(app, shutdown_timeout=2 * SLOW)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        yield
    finally:
        await runner.cleanup()


async def _until(condition: Callable[[], bool], what: str) -> None:
    try:
        async with asyncio.timeout(WAIT):
            while not condition():  # noqa: ASYNC110 - the receiver's records, not an event
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"waited {WAIT:g} s for {what}") from None


def _spans(total: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + BATCH_SIZE - 1, total)) for lo in range(1, total + 1, BATCH_SIZE)]


def _as_sent(result: ResultItem) -> dict[str, Any]:
    """A result as a webhook carries it, written out independently of the deliverer."""
    return {
        "id": f"{result.leaderboard_id}:{result.player_id}",
        "playerId": result.player_id,
        "position": result.position,
        "rank": result.rank,
        "total": result.total,
        "percentile": 100.0 * (result.total - result.rank + 1) / result.total,
        "score": result.score,
        "attainedAt": stamp(result.attained_at),
        "rewardId": result.reward_id,
        "rewardQuantity": result.reward_quantity,
    }


def _verifies(key: bytes, received: Received) -> bool:
    """The receiver's check, by hand (the how-to page's)."""
    signed = f"{received.webhook_id}.{received.timestamp}.".encode() + received.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [s.removeprefix("v1,") for s in received.signature.split() if s.startswith("v1,")]
    return any(hmac.compare_digest(expected, s) for s in offered)


def test_the_signature_is_the_standard_webhooks_one() -> None:
    """The Standard Webhooks reference libraries' own test vector, and the HMAC by hand."""
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    key = signing_key(secret)
    assert key == base64.b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    webhook_id, timestamp, body = (
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        b'{"test": 2432232314}',
    )
    by_hand = hmac.new(key, b"msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330." + body, hashlib.sha256)
    expected = "v1," + base64.b64encode(by_hand.digest()).decode()
    assert signature(key, webhook_id, timestamp, body) == expected
    assert expected == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert signing_key("a plain secret") == b"a plain secret"
    with pytest.raises(ValueError, match="base64"):
        signing_key("whsec_not base64!")


def test_the_backoff_doubles_from_one_second_to_ten_minutes_with_jitter() -> None:
    assert retry_delay(1, lambda: 0.0) == 0.5
    assert retry_delay(1, lambda: 1.0) == 1.0
    assert retry_delay(4, lambda: 1.0) == 8.0
    assert retry_delay(10, lambda: 1.0) == 512.0
    assert retry_delay(11, lambda: 1.0) == LONGEST_RETRY == 600.0
    assert retry_delay(10_000, lambda: 0.0) == 300.0
    rng = random.Random(5)
    for attempts in range(1, 40):
        ceiling = min(600.0, 2.0 ** (attempts - 1))
        delays = [retry_delay(attempts, rng.random) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered


def test_a_delivery_is_in_the_outbox_while_pending_and_out_of_it_once_delivered() -> None:
    pending = DeliveryItem(leaderboard_id="cup", total=3, closed_at=CLOSED)
    item = DELIVERY.item(pending, **pending.index_values())
    millis = int(CLOSED.timestamp() * 1000)
    assert (item["pk"], item["sk"], item["gsi1pk"], item["gsi1sk"]) == (
        "LEADERBOARD#cup",
        "DELIVERY",
        "WEBHOOK_OUTBOX",
        f"{millis:013d}#cup",
    )
    assert entity_of(item) is DELIVERY
    done = pending.model_copy(update={"delivered": 3, "delivered_at": CLOSED})
    assert "gsi1pk" not in DELIVERY.keys_of(done, **done.index_values())
    assert "#COUNT#" < "#METADATA" < item["sk"] < "SCORE#"


async def _close_with_outbox(table: Table, boards: list[tuple[str, int]], at: datetime) -> None:
    """Boards ``p000``... entered, closed one minute apart from ``at`` on, in list order."""
    rng = random.Random(11)
    most = max(size for _, size in boards)
    for board_id, size in boards:
        scores = [rng.randrange(40) for _ in range(size)]  # many ties
        await write_board(table.db, board_id, scores, ends_at=END, players=size == most)
    for i, (board_id, _) in enumerate(boards):
        await close_board(table.db, board_id, at=at + timedelta(minutes=i), outbox=True)


@pytest.mark.slow
async def test_every_result_arrives_in_order_through_outages_and_a_restart(table: Table) -> None:
    db = table.db
    boards = [("season-b", 260), ("season-a", 240), ("season-c", 205)]  # close order, not ids'
    await _close_with_outbox(table, boards, CLOSED)
    await write_board(db, "season-empty", [], ends_at=END, players=False)
    await close_board(db, "season-empty", at=CLOSED, outbox=True)
    assert await get_delivery(db, "season-empty") is None  # no entrant: nothing to deliver
    outbox = await pending_deliveries(db, 10)
    assert [(d.leaderboard_id, d.total, d.delivered) for d in outbox] == [
        (b, size, 0) for b, size in boards
    ]
    expected = [batch_id(b, lo, hi) for b, size in boards for lo, hi in _spans(size)]

    port = _free_port()
    target = WebhookTarget(f"http://127.0.0.1:{port}/hooks", signing_key(SECRET), TIMEOUT)
    receiver = Receiver("slow")
    time = Time(CLOSED)  # the first board has just closed: its settling is waited out
    attempts: list[Attempt] = []

    def start() -> asyncio.Task[None]:
        return asyncio.create_task(
            deliver(db, target, clock=time, sleep=time.sleep, report=attempts.append)
        )

    def failed() -> list[Attempt]:
        return [a for a in attempts if not a.ok]

    running = start()
    try:
        await _until(lambda: len(failed()) >= 3, "attempts refused (nothing listening)")
        assert time() >= CLOSED + SETTLE
        async with _listening(receiver.app(), port):
            refused = len(failed())
            await _until(
                lambda: receiver.count("slow") >= 2 and len(failed()) >= refused + 2,
                "attempts timed out on the slow receiver",
            )
            receiver.mode = "error"
            await _until(lambda: receiver.count("error") >= 2, "attempts answered 500")
            receiver.hold = expected[3]  # the second board's first batch
            receiver.mode = "ok"
            await _until(receiver.held.is_set, "a batch in flight")
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
            receiver.release.set()
            running = start()  # a restart
            async with asyncio.timeout(WAIT):  # until the outbox is empty
                while await pending_deliveries(db, 10):  # noqa: ASYNC110 - the table's state
                    await asyncio.sleep(0.05)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running

    # Every failure was recorded as what it was, and the same batch was sent again (a busy
    # machine may time out later batches too: the failures before the first success are those
    # of the receiver's outages).
    early = attempts[: next(i for i, a in enumerate(attempts) if a.ok)]
    kinds = [
        "refused"
        if a.status is None and "no answer" not in str(a.error)
        else "timeout"
        if a.status is None
        else str(a.status)
        for a in early
    ]
    assert (kinds[0], "timeout" in kinds, "500" in kinds) == ("refused", True, True)
    assert kinds.index("timeout") < kinds.index("500")
    assert {a.webhook_id for a in early} == {expected[0]}
    assert [a.attempt for a in early] == list(range(1, len(early) + 1))

    key = signing_key(SECRET)
    received = receiver.received
    assert all(_verifies(key, r) for r in received)
    assert all(
        r.signature == signature(key, r.webhook_id, int(r.timestamp), r.body) for r in received
    )
    stamps = [int(r.timestamp) for r in received]
    assert stamps == sorted(stamps)
    assert stamps[0] >= int((CLOSED + SETTLE).timestamp())

    # Each batch is the same every time it is sent: same id, same results, same bytes.
    bodies: dict[str, set[bytes]] = {}
    for r in received:
        bodies.setdefault(r.webhook_id, set()).add(r.body)
    assert sorted(bodies, key=expected.index) == expected
    assert all(len(b) == 1 for b in bodies.values())
    assert sum(r.webhook_id == expected[3] for r in received if r.mode == "ok") >= 2  # restart

    # Boards in close order, each board's batches in position order: a request is the batch
    # before it again, or the next one.
    order = [expected.index(r.webhook_id) for r in received]
    assert (order[0], order[-1]) == (0, len(expected) - 1)
    assert all(b - a in (0, 1) for a, b in pairwise(order))

    # Every result arrived, as it is stored.
    stored = {
        f"{r.leaderboard_id}:{r.player_id}": r
        for b, size in boards
        for r in await results_between(db, b, 1, size)
    }
    assert len(stored) == sum(size for _, size in boards)
    acknowledged: set[str] = set()
    for r in received:
        document = r.document
        board_id, span = r.webhook_id.rsplit(":", 1)
        lo, hi = map(int, span.split("-"))
        assert document["type"] == "leaderboard.results"
        assert (document["leaderboardId"], document["total"]) == (board_id, dict(boards)[board_id])
        assert [x["position"] for x in document["results"]] == list(range(lo, hi + 1))
        assert document["results"] == [_as_sent(stored[x["id"]]) for x in document["results"]]
        if r.mode == "ok":
            acknowledged |= {x["id"] for x in document["results"]}
    assert acknowledged == set(stored)

    # The outbox is empty, and each board's delivery is kept as its record.
    assert await pending_deliveries(db, 10) == []
    for board_id, size in boards:
        record = await get_delivery(db, board_id)
        assert record is not None
        assert (record.delivered, record.total, record.attempts) == (size, size, 0)
        assert record.delivered_at is not None
        assert (record.last_status, record.next_attempt_at, record.last_error) == (204, None, None)
    items = await scan_items(db)
    assert snapshot(items).problems == []
    records = [i for i in items if entity_of(i) is DELIVERY]
    assert len(records) == len(boards)
    assert not any("gsi1pk" in i for i in records)


async def test_a_batch_waits_for_its_positions_then_goes_without_erased_ones(table: Table) -> None:
    """A board is sent SETTLE after its close, a batch only once the index holds every
    position it spans; past GAP_PATIENCE a missing result is an erased one, and the batch goes
    without it, under the same webhook-id. With ``once`` the deliverer stops at what is not
    due."""
    db = table.db
    await write_board(db, "cup", [50, 40, 30, 20, 10], ends_at=END)
    await write_board(db, "plate", [5, 4, 3, 2, 1], ends_at=END, players=False)
    await close_board(db, "cup", at=CLOSED, outbox=True)
    # Each board closed when its close's last write was made: its ``at`` and the time it took,
    # so "plate" closes a second after "cup" ended, however long that took.
    cup = await get_delivery(db, "cup")
    assert cup is not None
    await close_board(db, "plate", at=cup.closed_at + timedelta(seconds=1), outbox=True)
    plate = await get_delivery(db, "plate")
    assert plate is not None
    assert plate.closed_at > cup.closed_at
    receiver = Receiver("ok")
    sent: list[Attempt] = []
    async with serving_on_loopback(receiver.app()) as url:
        target = WebhookTarget(f"{url}/hooks", signing_key(SECRET), 5.0)

        async def once(at: datetime) -> None:
            time = Time(at)
            await deliver(db, target, clock=time, sleep=time.sleep, once=True, report=sent.append)

        await once(cup.closed_at + SETTLE - timedelta(seconds=1))
        assert (sent, receiver.received) == ([], [])  # not settled yet

        third = RESULT.key_attributes(player_id="p002", leaderboard_id="cup")  # position 3
        raw = (await db.client.get_item(TableName=db.table, Key=serialize(third)))["Item"]
        await db.client.delete_item(TableName=db.table, Key=serialize(third))
        await once(cup.closed_at + SETTLE)
        assert (sent, receiver.received) == ([], [])  # position 3 is not in the index yet
        await db.client.put_item(TableName=db.table, Item=raw)
        await once(cup.closed_at + SETTLE)
        assert [str(a) for a in sent] == ["delivered cup 1-5 of 5 (5 results, HTTP 204)"]
        assert [x["position"] for x in receiver.received[0].document["results"]] == [1, 2, 3, 4, 5]

        fourth = RESULT.key_attributes(player_id="p003", leaderboard_id="plate")
        await db.client.delete_item(TableName=db.table, Key=serialize(fourth))
        await once(plate.closed_at + GAP_PATIENCE - timedelta(seconds=1))
        assert len(sent) == 1
        await once(plate.closed_at + GAP_PATIENCE + timedelta(seconds=1))
        assert [a.webhook_id for a in sent] == ["cup:1-5", "plate:1-5"]
        last = receiver.received[-1]
        assert last.webhook_id == "plate:1-5"
        assert [x["position"] for x in last.document["results"]] == [1, 2, 3, 5]
        assert last.document["total"] == 5
    assert await pending_deliveries(db, 10) == []


async def test_close_periods_fills_the_outbox_with_a_url_and_the_command_delivers_it(
    settings: Settings, table: Table
) -> None:
    backend = Backend(settings.endpoint_url, LOCAL_CREDENTIALS, embedded=False, description="")
    out, err = io.StringIO(), io.StringIO()
    assert await deliver_webhooks(settings, backend, once=True, out=out, err=err) == 1
    assert "LEADERBOARD_WEBHOOK_URL is not set" in err.getvalue()

    ended = now() - timedelta(hours=1)
    await write_board(table.db, "daily", list(range(5)), ends_at=ended)
    await write_board(table.db, "weekly", list(range(120)), ends_at=ended, players=False)
    grace = timedelta(minutes=1)
    closing = io.StringIO()
    assert await close_periods(settings, backend, ["daily"], grace, out=closing, err=err) == 0
    receiver = Receiver("ok")
    async with serving_on_loopback(receiver.app()) as url:
        configured = replace(settings, webhook_url=f"{url}/hooks", webhook_secret=SECRET)
        assert await close_periods(configured, backend, [], grace, out=closing, err=err) == 0
        assert closing.getvalue().splitlines() == [
            "closed daily: 5 entrants",
            "closed weekly: 120 entrants",
        ]
        assert await get_delivery(table.db, "daily") is None  # closed without a webhook URL
        weekly = await get_delivery(table.db, "weekly")
        assert weekly is not None

        def sooner() -> datetime:
            return weekly.closed_at + SETTLE - timedelta(seconds=1)

        def later() -> datetime:
            return weekly.closed_at + SETTLE

        assert (
            await deliver_webhooks(configured, backend, once=True, out=out, err=err, clock=sooner)
            == 0
        )
        assert out.getvalue() == "nothing due\n"  # closed less than SETTLE before
        out = io.StringIO()

        assert (
            await deliver_webhooks(configured, backend, once=True, out=out, err=err, clock=later)
            == 0
        )
        assert out.getvalue().splitlines() == [
            "delivered weekly 1-100 of 120 (100 results, HTTP 204)",
            "delivered weekly 101-120 of 120 (20 results, HTTP 204)",
        ]
        again = io.StringIO()
        assert (
            await deliver_webhooks(configured, backend, once=True, out=again, err=err, clock=later)
            == 0
        )
        assert again.getvalue() == "nothing due\n"
    assert [r.webhook_id for r in receiver.received] == ["weekly:1-100", "weekly:101-120"]
    assert all(_verifies(signing_key(SECRET), r) for r in receiver.received)


def test_the_outbox_metrics_are_one_embedded_metric_format_line() -> None:
    """CloudWatch's Embedded Metric Format: one JSON object on one line, its ``_aws`` member
    the metadata (a Timestamp in epoch milliseconds, one directive naming the namespace, the
    dimension sets and the metrics with their units), and each name it gives a root member:
    the dimension a string, each metric a number."""
    at = CLOSED + timedelta(seconds=754, milliseconds=250)
    line = OutboxGauge(at, pending=3, oldest_age=754.25, head_attempts=2).emf("leaderboard")
    assert "\n" not in line
    document = json.loads(line)
    assert document == {
        "_aws": {
            "Timestamp": int(at.timestamp() * 1000),
            "CloudWatchMetrics": [
                {
                    "Namespace": "Leaderboard",
                    "Dimensions": [["Table"]],
                    "Metrics": [
                        {"Name": "WebhookOutboxOldestAgeSeconds", "Unit": "Seconds"},
                        {"Name": "WebhookOutboxPending", "Unit": "Count"},
                        {"Name": "WebhookHeadAttempts", "Unit": "Count"},
                    ],
                }
            ],
        },
        "Table": "leaderboard",
        "WebhookOutboxOldestAgeSeconds": 754.25,
        "WebhookOutboxPending": 3,
        "WebhookHeadAttempts": 2,
    }
    (directive,) = document["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == METRIC_NAMESPACE
    assert [m["Name"] for m in directive["Metrics"]] == [
        OLDEST_AGE_METRIC,
        PENDING_METRIC,
        HEAD_ATTEMPTS_METRIC,
    ]
    assert isinstance(document["_aws"]["Timestamp"], int)
    for dimensions in directive["Dimensions"]:
        assert dimensions == [METRIC_DIMENSION]
        assert all(isinstance(document[name], str) for name in dimensions)
    for metric in directive["Metrics"]:
        value = document[metric["Name"]]
        assert isinstance(value, int | float)
        assert not isinstance(value, bool)


async def test_the_deliverer_measures_the_outbox_age_count_and_head_failures(
    table: Table,
) -> None:
    """A reading after the deliverer's first look at the outbox, then one every
    METRICS_EVERY of its time, through failures of the head and until the outbox is empty."""
    db = table.db
    await write_board(db, "cup", [50, 40, 30], ends_at=END)
    await write_board(db, "plate", [5, 4, 3], ends_at=END, players=False)
    await close_board(db, "cup", at=CLOSED, outbox=True)
    await close_board(db, "plate", at=CLOSED + timedelta(minutes=1), outbox=True)
    cup = await get_delivery(db, "cup")
    assert cup is not None
    at = cup.closed_at + timedelta(minutes=10)
    assert await outbox_gauge(db, at) == OutboxGauge(at, 2, 600.0, 0)

    receiver = Receiver("error")
    readings: list[OutboxGauge] = []
    async with serving_on_loopback(receiver.app()) as url:
        target = WebhookTarget(f"{url}/hooks", signing_key(SECRET), 5.0)
        time = Time(at)
        stop = asyncio.Event()
        running = asyncio.create_task(
            deliver(db, target, clock=time, sleep=time.sleep, stop=stop, gauge=readings.append)
        )
        try:
            await _until(lambda: any(r.head_attempts >= 3 for r in readings), "head failures")
            receiver.mode = "ok"
            await _until(lambda: readings[-1].pending == 0, "a reading of the empty outbox")
        finally:
            stop.set()
            await running

    assert readings[0] == OutboxGauge(at, 2, 600.0, 1)  # after the first, failed, attempt
    assert all(
        (later.at - earlier.at).total_seconds() >= METRICS_EVERY
        for earlier, later in pairwise(readings)
    )
    failing = [r for r in readings if r.pending == 2]
    assert all(r.oldest_age == (r.at - cup.closed_at).total_seconds() for r in failing)
    assert [r.head_attempts for r in failing] == sorted(r.head_attempts for r in failing)
    assert readings[-1] == OutboxGauge(readings[-1].at, 0, 0.0, 0)
    assert await pending_deliveries(db, 10) == []


async def test_the_deliverer_command_prints_the_outbox_metrics(
    settings: Settings, table: Table
) -> None:
    """``deliver-webhooks`` without --once: a metric line on stdout as it starts, of the
    table it delivers."""
    backend = Backend(settings.endpoint_url, LOCAL_CREDENTIALS, embedded=False, description="")
    configured = replace(settings, webhook_url="http://127.0.0.1:9/hooks", webhook_secret=SECRET)
    out, err = io.StringIO(), io.StringIO()
    running = asyncio.create_task(
        deliver_webhooks(configured, backend, once=False, out=out, err=err)
    )
    try:
        await _until(lambda: '"_aws"' in out.getvalue(), "a metric line")
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    started, line, *_ = out.getvalue().splitlines()
    assert started.startswith(f"delivering the webhook outbox of {settings.table} to ")
    document = json.loads(line)
    assert document[METRIC_DIMENSION] == settings.table
    assert (document[OLDEST_AGE_METRIC], document[PENDING_METRIC]) == (0.0, 0)
    assert document[HEAD_ATTEMPTS_METRIC] == 0
