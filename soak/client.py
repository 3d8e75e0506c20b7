"""GraphQL over HTTP for the soak's clients, and the counts every request adds to."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from dynamo.errors import ErrorCode
from edge.admission import RETRY_AFTER_SECONDS

__all__ = ["RETRYABLE", "UNEXPECTED", "Answer", "GraphQLClient", "OpStats", "Stats"]

UNEXPECTED = "unexpected"
"""The error class of every failure the soak does not provoke on purpose."""


@dataclass
class OpStats:
    """One operation's requests: latencies and error codes."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)


@dataclass
class Stats:
    """Counts of the whole run, kept by every client."""

    ops: dict[str, OpStats] = field(default_factory=dict)
    expected_errors: Counter[str] = field(default_factory=Counter)
    """Typed errors the workload provokes on purpose, by code."""
    unexpected_errors: Counter[str] = field(default_factory=Counter)
    """Every other failure, by code (``INTERNAL_SERVER_ERROR``, ``HTTP 503``, ...)."""
    retried: Counter[str] = field(default_factory=Counter)
    """Reads sent again after a refusal that asks the client to retry (the service out of time
    or of room: nothing was read), by the refusal's code; a read refused on its last attempt
    counts as unexpected."""
    error_samples: list[str] = field(default_factory=list)

    def op(self, name: str) -> OpStats:
        return self.ops.setdefault(name, OpStats())

    def error(self, op: str, code: str, *, expected: bool, detail: str = "") -> None:
        self.op(op).errors[code] += 1
        if expected:
            self.expected_errors[code] += 1
            return
        self.unexpected_errors[code] += 1
        if len(self.error_samples) < 20:
            self.error_samples.append(f"{op}: {code} {detail}"[:600])

    @property
    def requests(self) -> int:
        return sum(len(s.latencies_ms) for s in self.ops.values())

    def all_latencies(self) -> list[float]:
        return [x for s in self.ops.values() for x in s.latencies_ms]


@dataclass(frozen=True)
class Answer:
    """One response: ``data`` when the request succeeded, else ``code`` says why."""

    data: Any
    code: str | None
    """None on success; else the first GraphQL error code, ``HTTP <status>`` or
    ``TRANSPORT_ERROR``."""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.code is None


class GraphQLClient:
    """POSTs GraphQL requests with an API key (or, for moderation, an admin key) to a set of
    service instances, timing each into ``stats``."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        urls: Sequence[str],
        api_key: str,
        stats: Stats,
        *,
        admin_key: str | None = None,
    ) -> None:
        self.http = http
        self.urls = itertools.cycle(urls)
        """Requests go round-robin to these service instances, as behind a load balancer."""
        self.headers = {"Authorization": f"Bearer {api_key}"}
        self.admin_headers = {"Authorization": f"Bearer {admin_key or api_key}"}
        self.stats = stats

    async def request(
        self,
        op: str,
        query: str,
        variables: Mapping[str, Any],
        *,
        admin: bool = False,
        expected: Callable[[str], bool] | None = None,
        retries: int = 0,
    ) -> Answer:
        """Send one request (with the admin key when ``admin``). A failure of HTTP or GraphQL
        is counted as unexpected here, unless ``expected`` (asked once the answer is in)
        accepts its code; typed errors inside a mutation's payload are left to the caller.

        A refusal that asks the client to retry (:data:`RETRYABLE`) is sent again, up to
        ``retries`` times, the service's Retry-After apart, as a game client does with a read:
        the service promises such a request did nothing. Only for requests that change
        nothing."""
        attempts = 0
        while True:
            answer, provoked = await self._send(
                op, query, variables, admin=admin, expected=expected
            )
            if answer.code is None:
                return answer
            if attempts == retries or not _retryable(answer.code):
                self.stats.error(op, answer.code, expected=provoked, detail=answer.detail)
                return answer
            attempts += 1
            self.stats.retried[answer.code] += 1
            await asyncio.sleep(RETRY_AFTER_SECONDS)

    async def _send(
        self,
        op: str,
        query: str,
        variables: Mapping[str, Any],
        *,
        admin: bool,
        expected: Callable[[str], bool] | None,
    ) -> tuple[Answer, bool]:
        """One attempt, timed: its answer, and whether a failure was one ``expected``
        accepts (counting failures is left to the caller)."""
        started = time.perf_counter()
        try:
            async with self.http.post(
                next(self.urls),
                json={"query": query, "variables": dict(variables)},
                headers=self.admin_headers if admin else self.headers,
            ) as response:
                status = response.status
                text = await response.text()
            body: Any = _json(text)
        except (aiohttp.ClientError, TimeoutError) as error:
            self.stats.op(op).latencies_ms.append((time.perf_counter() - started) * 1000)
            return Answer(None, "TRANSPORT_ERROR", repr(error)), False
        self.stats.op(op).latencies_ms.append((time.perf_counter() - started) * 1000)
        errors = body.get("errors") if isinstance(body, dict) else None
        if status == 200 and isinstance(body, dict) and not errors and "data" in body:
            return Answer(body["data"], None), False
        codes = [
            str((e.get("extensions") or {}).get("code", "GRAPHQL_ERROR"))
            for e in errors or []
            if isinstance(e, dict)
        ]
        code = codes[0] if codes else "NO_DATA"
        if status != 200:
            code = f"HTTP {status} {code}" if codes else f"HTTP {status}"
        provoked = status == 200 and expected is not None and expected(code)
        return Answer(None, code, (json.dumps(errors) if errors else text)[:400]), provoked


RETRYABLE = (ErrorCode.BACKEND_UNAVAILABLE.value, ErrorCode.SERVICE_OVERLOADED.value)
"""The codes of refusals that promise nothing was done and ask the client to come back (after
the service's Retry-After)."""


def _retryable(code: str) -> bool:
    return code.removeprefix("HTTP 503 ") in RETRYABLE


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
