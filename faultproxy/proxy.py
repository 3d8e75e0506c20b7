"""A fault-injecting HTTP proxy for tests and benchmarks: it stands between the service and
DynamoDB Local.

Every request is matched against the proxy's rules by its DynamoDB operation (the
``X-Amz-Target`` header, e.g. ``DynamoDB_20120810.TransactWriteItems``). The first rule that
fires decides what happens to it:

- ``THROTTLE`` / ``PROVISIONED``: answered 400 with DynamoDB's own error body
  (``ThrottlingException`` / ``ProvisionedThroughputExceededException``), not forwarded;
- ``SERVER_ERROR``: answered 500 ``InternalServerError``, not forwarded;
- ``CANCEL_THROTTLED``: a TransactWriteItems answered 400 ``TransactionCanceledException``
  with a ``ThrottlingError`` cancellation reason (how DynamoDB throttles a transaction), not
  forwarded;
- ``DROP_BEFORE``: the connection is closed before anything is forwarded;
- ``DROP_AFTER``: forwarded, DynamoDB's answer read in full (so the write is done), then the
  connection is closed without an answer: the client cannot tell what happened;
- ``DELAY``: forwarded after a pause;
- ``HOLD``: forwarded once the rule's ``released`` event is set: a test can see what else is
  sent while a request is held.

Decisions are deterministic: a rule fires on every ``every``-th request it is asked about, or
with probability ``rate`` drawn from one ``random.Random(seed)``, and on at most ``times``
requests. Everything the proxy did is counted (``received``, ``injected``, ``forwarded``) so
that tests can assert that the faults they asked for really happened.

With ``conflicts`` set (``emulate_conflicts()``), the proxy also applies DynamoDB's
transaction-conflict rule, which DynamoDB Local lacks (see ``faultproxy.conflicts``): each
request is first checked against the items that the requests in flight hold, and one that
DynamoDB would cancel for a conflict is answered by the proxy, neither asked about by the
rules nor forwarded. An admitted request holds its items while the rules act on it (a
``HOLD`` or ``DELAY`` keeps them held) and until DynamoDB Local's answer is back. Off by
default.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import aiohttp
from aiohttp import web

from faultproxy.conflicts import Claim, TransactionConflicts

__all__ = ["Fault", "FaultProxy", "Rule"]

_TARGET_PREFIX = "DynamoDB_20120810."
_HOP_BY_HOP = {
    "connection",
    "content-length",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}


class Fault(StrEnum):
    THROTTLE = "throttle"
    PROVISIONED = "provisioned"
    SERVER_ERROR = "server_error"
    CANCEL_THROTTLED = "cancel_throttled"
    DROP_BEFORE = "drop_before"
    DROP_AFTER = "drop_after"
    DELAY = "delay"
    HOLD = "hold"


_ERRORS: dict[Fault, tuple[int, str, str]] = {
    Fault.THROTTLE: (
        400,
        "ThrottlingException",
        "Rate of requests exceeds the allowed throughput.",
    ),
    Fault.PROVISIONED: (
        400,
        "ProvisionedThroughputExceededException",
        "The level of configured provisioned throughput for the table was exceeded.",
    ),
    Fault.SERVER_ERROR: (500, "InternalServerError", "Internal server error"),
}


@dataclass
class Rule:
    """One kind of fault for the requests of one operation (or of all, ``operation=None``)."""

    fault: Fault
    operation: str | None = None
    rate: float = 1.0
    every: int | None = None
    """Fire on the n-th, 2n-th, ... request this rule is asked about (instead of ``rate``)."""
    times: int | None = None
    """Fire on at most this many requests; None: no limit."""
    after: int = 0
    """Let this many requests through before the rule may fire (to cut an operation that
    makes several calls part-way)."""
    delay: float = 0.0
    """Seconds to wait before forwarding (``DELAY``)."""
    released: asyncio.Event | None = None
    """Forward once set (``HOLD``)."""
    asked: int = 0
    fired: int = 0

    def fires(self, draw: random.Random) -> bool:
        self.asked += 1
        if self.asked <= self.after:
            return False
        if self.every is not None:
            return self.asked % self.every == 0
        return self.rate >= 1.0 or draw.random() < self.rate

    def matches(self, operation: str) -> bool:
        return self.operation is None or self.operation == operation

    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times


class FaultProxy:
    """A reverse proxy on a free loopback port, forwarding to ``upstream``."""

    def __init__(
        self, upstream: str, *, seed: int = 0, conflicts: TransactionConflicts | None = None
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.rules: list[Rule] = []
        self.conflicts = conflicts
        """DynamoDB's transaction-conflict rule, when set; None: every request goes to the
        rules and on to DynamoDB Local, which runs transactions one after another."""
        self.received: Counter[str] = Counter()
        self.injected: Counter[tuple[str, Fault]] = Counter()
        self.forwarded: Counter[str] = Counter()
        self._random = random.Random(seed)
        self._progress = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self) -> str:
        app = web.Application(client_max_size=16 << 20)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        port: int = self._runner.addresses[0][1]
        # The body must reach the client byte for byte: botocore checks DynamoDB's CRC32.
        self._session = aiohttp.ClientSession(auto_decompress=False)
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def inject(self, *rules: Rule) -> None:
        """Replace the rules (and count from zero again)."""
        self.rules = list(rules)
        self.reset_counts()

    def clear(self) -> None:
        self.rules = []

    def emulate_conflicts(
        self, *, hold: float = 0.0, key_attributes: Sequence[str] = ("pk", "sk")
    ) -> TransactionConflicts:
        """Apply DynamoDB's transaction-conflict rule from now on (each admitted
        TransactWriteItems waiting ``hold`` seconds, its items held, before it is forwarded);
        returns the rule, which counts what it did."""
        self.conflicts = TransactionConflicts(hold=hold, key_attributes=tuple(key_attributes))
        return self.conflicts

    def reset_counts(self) -> None:
        """Count from zero again (the conflict rule's counts too)."""
        self.received.clear()
        self.injected.clear()
        self.forwarded.clear()
        if self.conflicts is not None:
            self.conflicts.reset()

    def faults(self, fault: Fault, operation: str | None = None) -> int:
        """How many requests (of ``operation``, or of all) got ``fault``."""
        return sum(
            n for (op, f), n in self.injected.items() if f is fault and operation in (None, op)
        )

    async def wait_received(self, operation: str, count: int) -> None:
        """Wait until ``count`` requests of ``operation`` have reached the proxy."""
        async with self._progress:
            await self._progress.wait_for(lambda: self.received[operation] >= count)

    async def wait_forwarded(self, operation: str, count: int) -> None:
        """Wait until ``count`` requests of ``operation`` have been answered by DynamoDB."""
        async with self._progress:
            await self._progress.wait_for(lambda: self.forwarded[operation] >= count)

    async def wait_conflicts(self, count: int) -> None:
        """Wait until the conflict rule has refused ``count`` requests."""
        async with self._progress:
            await self._progress.wait_for(
                lambda: self.conflicts is not None and self.conflicts.total >= count
            )

    def _choose(self, operation: str) -> Rule | None:
        for rule in self.rules:
            if not rule.matches(operation) or rule.exhausted():
                continue
            if rule.fires(self._random):
                rule.fired += 1
                return rule
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        target = request.headers.get("X-Amz-Target", "")
        operation = target.removeprefix(_TARGET_PREFIX)
        # Decided before anything can run in between: once ``received`` counts a request,
        # the items it holds are held.
        decided = self.conflicts.admit(operation, body) if self.conflicts is not None else None
        async with self._progress:
            self.received[operation] += 1
            self._progress.notify_all()
        if decided is None:
            return await self._serve(request, operation, body, None)
        if isinstance(decided, Claim):
            try:
                return await self._serve(request, operation, body, decided)
            finally:
                decided.release(None)
        return _json_answer(decided.status, decided.body)

    async def _serve(
        self, request: web.Request, operation: str, body: bytes, claim: Claim | None
    ) -> web.StreamResponse:
        rule = self._choose(operation)
        fault = rule.fault if rule is not None else None
        if fault is not None:
            self.injected[operation, fault] += 1
        if fault in _ERRORS:
            status, code, message = _ERRORS[fault]
            return _json_answer(
                status,
                json.dumps(
                    {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message}
                ).encode(),
            )
        if fault is Fault.CANCEL_THROTTLED:
            return _throttled_cancellation(body)
        if fault is Fault.DROP_BEFORE:
            return self._drop(request)
        if fault is Fault.DELAY:
            assert rule is not None
            await asyncio.sleep(rule.delay)
        if fault is Fault.HOLD:
            assert rule is not None
            assert rule.released is not None
            await rule.released.wait()
        if claim is not None and claim.hold > 0:
            await asyncio.sleep(claim.hold)
        status, headers, answer = await self._forward(request, body)
        if claim is not None:
            claim.release(status)
        async with self._progress:
            self.forwarded[operation] += 1
            self._progress.notify_all()
        if fault is Fault.DROP_AFTER:
            return self._drop(request)
        response = web.Response(status=status, body=answer)
        for name, value in headers:
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-type":
                response.headers.add(name, value)
        response.headers["Content-Type"] = dict(headers).get(
            "Content-Type", "application/x-amz-json-1.0"
        )
        return response

    async def _forward(
        self, request: web.Request, body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        async with self._session.request(
            request.method, self.upstream + request.path_qs, data=body, headers=headers
        ) as upstream:
            answer = await upstream.read()
            return upstream.status, list(upstream.headers.items()), answer

    @staticmethod
    def _drop(request: web.Request) -> web.StreamResponse:
        """Close the client's connection without a response."""
        transport: Any = request.transport
        if transport is not None:
            transport.close()
        # Nothing can be written any more; aiohttp discards this response.
        return web.Response(status=204)


def _throttled_cancellation(body: bytes) -> web.Response:
    """DynamoDB's answer to a transaction cancelled because its first item was throttled: one
    reason per item, in order."""
    items = json.loads(body).get("TransactItems", [])
    reasons = [{"Code": "ThrottlingError", "Message": "Throughput exceeds the current capacity."}]
    reasons += [{"Code": "None"} for _ in items[1:]]
    codes = ", ".join(r["Code"] for r in reasons)
    return _json_answer(
        400,
        json.dumps(
            {
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "message": f"Transaction cancelled, please refer cancellation reasons for "
                f"specific reasons [{codes}]",
                "CancellationReasons": reasons,
            }
        ).encode(),
    )


def _json_answer(status: int, body: bytes) -> web.Response:
    """An answer of the proxy's own, as DynamoDB sends it (with a request id of its own)."""
    return web.Response(
        status=status,
        body=body,
        content_type="application/x-amz-json-1.0",
        headers={"x-amzn-RequestId": str(uuid.uuid4())},
    )
