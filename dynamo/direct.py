"""DynamoDB's reads and transactions sent straight over HTTP, beside the botocore client.

A call through botocore costs about 1 ms of CPU here whatever it carries: the request is built
by walking the operation's model, its headers are kept in an ``email.message`` object, a dozen
events are emitted, and the request is signed through that object. :class:`DirectCalls` sends
the three reads of a page (``Query``, ``GetItem``, ``BatchGetItem``) and the transactions
every play, registration and moderation writes with (``TransactWriteItems``) itself: the
parameters, already in DynamoDB's JSON form, serialised as they are, a SigV4 signature
computed over a fixed set of headers (the signing key kept for the day), and the answer read
by dynamo/wire.py's attribute-value rules. The request goes over dynamo/transport.py's kept
connections (at most the client's ``max_pool_connections``, its connect and read timeouts)
rather than a general HTTP client's. A call costs about a quarter of botocore's CPU.

What the client's other users rely on still holds, because the call goes through the client's
own event system at the points botocore would: ``provide-client-params`` and
``before-parameter-build`` (where a hook may still change the parameters, and where botocore
fills in a transaction's ``ClientRequestToken`` when none is given, so that each retry of it
carries the same token and DynamoDB applies it at most once), ``before-call``
(where the call is counted, charged to its request's budget, and refused by an open circuit
breaker), ``before-send`` before each attempt, ``needs-retry`` after each attempt (so
botocore's standard retry policy, the client's attempt limit and its retry quota decide every
retry and its backoff, exactly as for the client's own calls), ``after-call`` and
``after-call-error``. Errors are raised as the client raises them: its modelled exception
classes for DynamoDB's error answers, botocore's connection and timeout exceptions for the
transport's failures. ``tests/test_direct_calls.py`` holds the answers, errors, retries and
signatures equal to botocore's.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import hashlib
import hmac
import inspect
import json
import os
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import orjson
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
    SSLError,
)
from botocore.httpsession import get_cert_path

from dynamo.transport import Transport
from dynamo.wire import WireParser, attribute_map

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = [
    "OPERATIONS",
    "READS",
    "WRITES",
    "DirectCalls",
    "FrozenKeys",
    "SigV4",
    "decode_answer",
    "may_hold_binary",
    "parse_answer",
]

READS = ("Query", "GetItem", "BatchGetItem")
"""The reads :class:`DirectCalls` sends."""
WRITES = ("TransactWriteItems",)
"""The writes :class:`DirectCalls` sends."""
OPERATIONS = READS + WRITES
"""Every operation :class:`DirectCalls` sends."""

_SERVICE = "dynamodb"
_TARGET = "DynamoDB_20120810."
_CONTENT_TYPE = "application/x-amz-json-1.0"
_ALGORITHM = "AWS4-HMAC-SHA256"


@dataclass(frozen=True)
class FrozenKeys:
    """One set of credentials, as botocore's ``get_frozen_credentials`` gives it."""

    access_key: str
    secret_key: str
    token: str | None = None


class _Credentials(Protocol):
    def get_frozen_credentials(self) -> Any: ...


class SigV4:
    """Signature Version 4 for DynamoDB's JSON API: ``POST /`` with no query string, over the
    headers ``content-type``, ``host``, ``x-amz-date``, ``x-amz-target`` and, with a session
    token, ``x-amz-security-token``. The signing key is derived once per day and secret."""

    def __init__(self, region: str, host: str) -> None:
        self.region = region
        self.host = host
        self._keys: tuple[str, str, bytes] | None = None

    def _signing_key(self, secret: str, day: str) -> bytes:
        cached = self._keys
        if cached is not None and cached[0] == secret and cached[1] == day:
            return cached[2]
        key = hmac.new(f"AWS4{secret}".encode(), day.encode(), hashlib.sha256).digest()
        for part in (self.region, _SERVICE, "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        self._keys = (secret, day, key)
        return key

    def headers(
        self, operation: str, body: bytes, keys: FrozenKeys, now: datetime.datetime
    ) -> dict[str, str]:
        """The request's headers, ``authorization`` among them, for ``body`` sent at ``now``
        (UTC)."""
        stamp = now.strftime("%Y%m%dT%H%M%SZ")
        day = stamp[:8]
        headers = {
            "content-type": _CONTENT_TYPE,
            "host": self.host,
            "x-amz-date": stamp,
            "x-amz-target": _TARGET + operation,
        }
        if keys.token:
            headers["x-amz-security-token"] = keys.token
        names = sorted(headers)
        signed = ";".join(names)
        canonical = "\n".join(
            (
                "POST",
                "/",
                "",
                "".join(f"{name}:{headers[name]}\n" for name in names),
                signed,
                hashlib.sha256(body).hexdigest(),
            )
        )
        scope = f"{day}/{self.region}/{_SERVICE}/aws4_request"
        to_sign = (
            f"{_ALGORITHM}\n{stamp}\n{scope}\n" + hashlib.sha256(canonical.encode()).hexdigest()
        )
        signature = hmac.new(
            self._signing_key(keys.secret_key, day), to_sign.encode(), hashlib.sha256
        ).hexdigest()
        headers["authorization"] = (
            f"{_ALGORITHM} Credential={keys.access_key}/{scope}, SignedHeaders={signed}, "
            f"Signature={signature}"
        )
        return headers


@dataclass(frozen=True)
class _Request:
    """What a ``before-send`` hook is shown of an attempt (an answer it returns is not
    taken: every attempt goes to DynamoDB)."""

    url: str
    body: bytes
    method: str = "POST"


@dataclass(frozen=True)
class _Answer:
    """What botocore's retry policy and the client's hooks read of an HTTP answer, in
    aiobotocore's form (its ``content`` awaited: the retry policy checks DynamoDB's CRC32 of
    the body with it)."""

    status_code: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def content(self) -> Awaitable[bytes]:
        return self._body()

    async def _body(self) -> bytes:
        return self.body


def _base64(value: object) -> str:
    """A binary attribute value of the parameters (``bytes``, as botocore takes it) in
    DynamoDB's JSON: base64, as botocore's serialiser writes it."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    raise TypeError(f"not a value DynamoDB's JSON holds: {type(value).__name__}")


def _items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [attribute_map(item) for item in items]


def _capacity(value: Any) -> Any:
    """ConsumedCapacity with its units as floats (DynamoDB's model calls them doubles)."""
    if isinstance(value, list):
        return [_capacity(member) for member in value]
    if isinstance(value, dict):
        return {
            name: float(member)
            if isinstance(member, int) and name.endswith("Units")
            else _capacity(member)
            for name, member in value.items()
        }
    return value


def _collection_metrics(metrics: dict[str, Any], *, binary: bool) -> dict[str, Any]:
    """ItemCollectionMetrics by table as the client returns them: the size estimates as
    floats (doubles in the model) and, with ``binary``, the keys' binary values decoded."""

    def metric(member: dict[str, Any]) -> dict[str, Any]:
        read = dict(member)
        if "SizeEstimateRangeGB" in read:
            read["SizeEstimateRangeGB"] = [float(n) for n in read["SizeEstimateRangeGB"]]
        if binary and "ItemCollectionKey" in read:
            read["ItemCollectionKey"] = attribute_map(read["ItemCollectionKey"])
        return read

    return {table: [metric(m) for m in members] for table, members in metrics.items()}


def parse_answer(operation: str, body: dict[str, Any], *, binary: bool = True) -> dict[str, Any]:
    """A successful answer of one of :data:`OPERATIONS` as botocore's client (with
    dynamo/wire.py's parser) returns it, but for ``ResponseMetadata``. ``binary``: whether
    the answer may hold binary attribute values, to be decoded from base64; without any, its
    items are the decoded JSON itself."""
    parsed = dict(body)
    if "ItemCollectionMetrics" in parsed:
        parsed["ItemCollectionMetrics"] = _collection_metrics(
            parsed["ItemCollectionMetrics"], binary=binary
        )
    if binary:
        if "Items" in parsed:
            parsed["Items"] = _items(parsed["Items"])
        for name in ("Item", "LastEvaluatedKey"):
            if name in parsed:
                parsed[name] = attribute_map(parsed[name])
        if "Responses" in parsed:
            parsed["Responses"] = {
                table: _items(items) for table, items in parsed["Responses"].items()
            }
        if "UnprocessedKeys" in parsed:
            parsed["UnprocessedKeys"] = {
                table: {**keys, "Keys": _items(keys["Keys"])} if "Keys" in keys else keys
                for table, keys in parsed["UnprocessedKeys"].items()
            }
    if "ConsumedCapacity" in parsed:
        parsed["ConsumedCapacity"] = _capacity(parsed["ConsumedCapacity"])
    return parsed


def decode_answer(body: bytes) -> Any:
    """An answer's JSON, decoded by orjson (a page of 100 items in about half the time of the
    standard library's decoder), or by the standard library where orjson refuses what it
    reads (an escaped lone surrogate): the same values either way, DynamoDB writing numbers
    outside attribute values (which hold them as text) only as counts and capacities, never
    an integer past 64 bits, which orjson would read as a float; ValueError for what is not
    JSON."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


def may_hold_binary(body: bytes) -> bool:
    """Whether a JSON answer may hold a binary attribute value: one is a member named ``B``
    or ``BS``, and DynamoDB writes member names as they are (no escapes), so an answer
    without the text ``"B"`` or ``"BS"`` anywhere holds none. (The text inside a string
    value only costs the walk that decodes nothing.)"""
    return b'"B"' in body or b'"BS"' in body


def _certificates() -> ssl.SSLContext:
    """A TLS context verifying against the certificates botocore verifies against where the
    client is given none of its own: ``AWS_CA_BUNDLE``'s, else the bundle botocore ships
    (certifi's where installed)."""
    bundle = os.environ.get("AWS_CA_BUNDLE") or get_cert_path(True)
    return ssl.create_default_context(cafile=bundle)


class DirectCalls:
    """Sends :data:`OPERATIONS` for ``client`` over connections of its own (their number
    and timeouts the client's), signed with ``credentials`` (botocore's credentials,
    refreshed as they refresh themselves)."""

    def __init__(
        self,
        client: DynamoDBClient,
        credentials: _Credentials,
        *,
        clock: Callable[[], datetime.datetime] | None = None,
    ) -> None:
        self._client = client
        self._credentials = credentials
        self._clock = clock or (lambda: datetime.datetime.now(datetime.UTC))
        meta = client.meta
        self.endpoint_url = meta.endpoint_url
        split = urlsplit(self.endpoint_url)
        self._url = f"{split.scheme}://{split.netloc}/"
        self._signer = SigV4(meta.region_name, split.netloc)
        config: Any = meta.config  # an AioConfig, whose settings the stubs do not declare
        self._transport = Transport(
            self._url,
            limit=int(config.max_pool_connections or 10),
            connect_timeout=config.connect_timeout,
            read_timeout=config.read_timeout,
            ssl_context=_certificates() if split.scheme == "https" else None,
        )
        self._user_agent = config.user_agent or "leaderboard"
        service = meta.service_model
        self._models = {name: service.operation_model(name) for name in OPERATIONS}
        self._service_id = service.service_id.hyphenize()
        self._parser: Any = WireParser()

    @property
    def transport(self) -> Transport:
        """The connections the calls are sent over."""
        return self._transport

    async def close(self) -> None:
        await self._transport.close()

    async def _keys(self) -> FrozenKeys:
        frozen = self._credentials.get_frozen_credentials()
        if inspect.isawaitable(frozen):
            frozen = await frozen
        return FrozenKeys(frozen.access_key, frozen.secret_key, frozen.token)

    async def call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer of ``operation`` (one of :data:`OPERATIONS`) with ``params``, as the
        client's own method returns it; its error raised as the client raises it."""
        model = self._models[operation]
        events: Any = self._client.meta.events  # aiobotocore's emitter, awaited
        context: dict[str, Any] = {
            "client_region": self._signer.region,
            "client_config": self._client.meta.config,
            "has_streaming_input": False,
            "auth_type": model.resolved_auth_type,
        }
        request_dict: dict[str, Any] = {
            "context": context,
            "body": params,
            "headers": {},
            "url": self._url,
            "method": "POST",
        }
        given = dict(params)
        provided = await events.emit(
            f"provide-client-params.{self._service_id}.{operation}",
            params=given,
            model=model,
            context=context,
        )
        params = next((r[1] for r in provided if r[1] is not None), given)
        await events.emit(
            f"before-parameter-build.{self._service_id}.{operation}",
            params=params,
            model=model,
            context=context,
        )
        _, early = await events.emit_until_response(
            f"before-call.{self._service_id}.{operation}",
            model=model,
            params=request_dict,
            request_signer=None,
            context=context,
        )
        answer: Any
        parsed: dict[str, Any]
        try:
            if early is not None:
                answer, parsed = early
            else:
                answer, parsed = await self._send(operation, model, params, request_dict)
        except Exception as error:
            await events.emit(
                f"after-call-error.{self._service_id}.{operation}",
                exception=error,
                context=context,
            )
            raise
        await events.emit(
            f"after-call.{self._service_id}.{operation}",
            http_response=answer,
            parsed=parsed,
            model=model,
            context=context,
        )
        if answer.status_code >= 300:
            code = parsed.get("Error", {}).get("Code")
            modelled: Any = self._client.exceptions.from_code(code)
            raise modelled(parsed, operation)
        return parsed

    async def _send(
        self, operation: str, model: Any, params: Mapping[str, Any], request_dict: dict[str, Any]
    ) -> tuple[_Answer, dict[str, Any]]:
        body = json.dumps(params, separators=(",", ":"), default=_base64).encode()
        events: Any = self._client.meta.events
        attempts = 0
        while True:
            attempts += 1
            answer: _Answer | None = None
            parsed: dict[str, Any] | None = None
            caught: Exception | None = None
            await events.emit(
                f"before-send.{self._service_id}.{operation}",
                request=_Request(self._url, body),
            )
            try:
                answer = await self._post(operation, body)
                parsed = await self._parse(operation, model, answer, attempts)
            except (
                EndpointConnectionError,
                ConnectionClosedError,
                ReadTimeoutError,
                ConnectTimeoutError,
                SSLError,
                HTTPClientError,
            ) as error:
                caught = error
            responses = await events.emit(
                f"needs-retry.{self._service_id}.{operation}",
                response=None if answer is None else (answer, parsed),
                endpoint=self,
                operation=model,
                attempts=attempts,
                caught_exception=caught,
                request_dict=request_dict,
            )
            delay = next((r[1] for r in responses if r[1] is not None), None)
            if delay is None:
                if caught is not None:
                    raise caught
                assert answer is not None
                assert parsed is not None
                return answer, parsed
            await asyncio.sleep(delay)

    async def _post(self, operation: str, body: bytes) -> _Answer:
        headers = self._signer.headers(operation, body, await self._keys(), self._clock())
        headers["user-agent"] = self._user_agent
        answer = await self._transport.post(headers, body)
        return _Answer(answer.status, answer.headers, answer.body)

    async def _error(self, model: Any, answer: _Answer) -> dict[str, Any]:
        """An error answer read by the client's own parser, with the members of the error's
        modelled shape (a cancelled transaction's reasons, with the items that failed their
        conditions), as the client's endpoint reads one (errors are not the hot path)."""
        response = {
            "status_code": answer.status_code,
            "headers": answer.headers,
            "body": answer.body,
        }
        parsed: dict[str, Any] = await self._parser.parse(response, model.output_shape)
        shape = model.service_model.shape_for_error_code(parsed.get("Error", {}).get("Code"))
        if shape is not None:
            parsed.update(await self._parser.parse(response, shape))
        return parsed

    async def _parse(
        self, operation: str, model: Any, answer: _Answer, attempts: int
    ) -> dict[str, Any]:
        if answer.status_code >= 300:
            parsed = await self._error(model, answer)
        else:
            try:
                decoded = decode_answer(answer.body)
            except ValueError as error:
                raise HTTPClientError(error=error) from error
            parsed = parse_answer(operation, decoded, binary=may_hold_binary(answer.body))
        parsed["ResponseMetadata"] = {
            "RequestId": answer.headers.get("x-amzn-requestid", ""),
            "HTTPStatusCode": answer.status_code,
            "HTTPHeaders": dict(answer.headers),
            "RetryAttempts": attempts - 1,
        }
        return parsed
