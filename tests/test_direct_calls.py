"""dynamo/direct.py's reads and transactions are the botocore client's: the same signature,
the same answers and writes, the same errors, the same retries and the same hooks.

Each call is sent twice, once through the client's own method and once through
:class:`DirectCalls` on the same client, to the real DynamoDB Local (through the fault proxy
when a fault is wanted), and the two outcomes are compared: the answers but for
``ResponseMetadata`` (of which the status and the retry counts are compared too), the errors
by class, ``Error`` and the rest of their response, the attempts by what the proxy received.
The signature is compared with botocore's own ``SigV4Auth`` over the same request at a fixed
instant.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from aiobotocore.config import AioConfig
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.retries.standard import ExponentialBackoff

from dynamo.db import Db
from dynamo.direct import DirectCalls, FrozenKeys, SigV4, may_hold_binary, parse_answer
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.metrics import CallCounter
from dynamo.outcomes import attach, watching
from dynamo.resilience import CircuitBreaker
from dynamo.wire import WireParserFactory
from faultproxy import Fault, FaultProxy, Rule
from leaderboard.backend import LOCAL_CREDENTIALS, open_table
from leaderboard.config import Settings

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

ATTEMPTS = 3
"""The attempts per call (the first one included) of the clients made here."""

INDEX = "byG"
"""The table's global secondary index: hash ``g``, range ``pk``."""

Call = Callable[[], Awaitable[dict[str, Any]]]


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's standard backoff scaled down a hundred times (as in tests/test_faults.py):
    the same attempts and retry decisions, in milliseconds."""
    original = ExponentialBackoff.delay_amount

    def quicker(self: ExponentialBackoff, context: Any) -> float:
        return float(original(self, context)) / 100

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", quicker)


def _config(attempts: int = ATTEMPTS) -> AioConfig:
    return AioConfig(retries={"mode": "standard", "total_max_attempts": attempts})


def _direct(db: Db) -> DirectCalls:
    assert isinstance(db.direct, DirectCalls), "open_table builds DirectCalls for given keys"
    return db.direct


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Db]:
    """The test's table, straight from DynamoDB Local (created by ``items``)."""
    async with open_table(settings, LOCAL_CREDENTIALS, config=_config()) as opened:
        yield opened


@pytest.fixture
async def proxied(settings: Settings, proxy: FaultProxy) -> AsyncIterator[Db]:
    """The same table, through the fault proxy."""
    through = replace(settings, endpoint_url=proxy.url)
    async with open_table(through, LOCAL_CREDENTIALS, config=_config()) as opened:
        yield opened


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but not listening: a connection to it is refused, and no other
    process can take it while the test runs."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bound:
        bound.bind(("127.0.0.1", 0))
        port: int = bound.getsockname()[1]
        yield port


# --- the table and its items -----------------------------------------------------------------


def _binary(n: int) -> bytes:
    return bytes([n, 0, 255, n ^ 0x5A]) + f"bin-{n}".encode()


def _rich(pk: str, sk: str, n: int) -> dict[str, Any]:
    """An item holding every type of attribute value, binary ones inside maps and lists."""
    return {
        "pk": {"S": pk},
        "sk": {"S": sk},
        "g": {"S": "rich"},
        "s": {"S": f"text {n} é ✓"},
        "n": {"N": f"{n}.25"},
        "big": {"N": "123456789012345678901234567890"},
        "b": {"B": _binary(n)},
        "ss": {"SS": [f"a{n}", f"b{n}", "c"]},
        "ns": {"NS": ["1", f"{n + 2}", "-3.5"]},
        "bs": {"BS": [_binary(n), _binary(n + 100)]},
        "t": {"BOOL": n % 2 == 0},
        "z": {"NULL": True},
        "m": {
            "M": {
                "inner": {"S": "x"},
                "bin": {"B": _binary(n + 1)},
                "deep": {"L": [{"B": _binary(n + 2)}, {"M": {"bs": {"BS": [_binary(n + 3)]}}}]},
                "empty": {"M": {}},
            }
        },
        "l": {
            "L": [
                {"S": "first"},
                {"N": "2"},
                {"B": _binary(n + 4)},
                {"M": {"flag": {"BOOL": False}, "nothing": {"NULL": True}}},
                {"L": []},
            ]
        },
    }


def _plain(pk: str, sk: str, n: int) -> dict[str, Any]:
    """An item without any binary value (the answers read without decoding)."""
    return {
        "pk": {"S": pk},
        "sk": {"S": sk},
        "g": {"S": "plain"},
        "s": {"S": f"plain {n}"},
        "n": {"N": str(n)},
        "m": {"M": {"l": {"L": [{"S": "B"}, {"N": "1"}]}, "ss": {"SS": ["B", "BS"]}}},
    }


def _canonical(value: Any) -> Any:
    """``value`` (items, an item, an attribute value) with its sets' members in order:
    DynamoDB keeps a set's members in an order of its own."""
    if isinstance(value, list):
        return [_canonical(member) for member in value]
    if isinstance(value, dict):
        return {
            name: sorted(member) if name in ("SS", "NS", "BS") else _canonical(member)
            for name, member in value.items()
        }
    return value


RICH = [_rich("rich", f"sk-{n:02d}", n) for n in range(5)]
PLAIN = [_plain("plain", f"sk-{n:02d}", n) for n in range(4)]


@pytest.fixture
async def items(db: Db) -> Db:
    """The table (hash ``pk``, range ``sk``, both strings, and the index ``byG``), holding
    :data:`RICH` and :data:`PLAIN`."""
    await db.client.create_table(
        TableName=db.table,
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g")
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": INDEX,
                "KeySchema": [
                    {"AttributeName": "g", "KeyType": "HASH"},
                    {"AttributeName": "pk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    await db.client.get_waiter("table_exists").wait(
        TableName=db.table, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
    )
    for item in RICH + PLAIN:
        await db.client.put_item(TableName=db.table, Item=item)
    return db


# --- comparing outcomes ----------------------------------------------------------------------


def _without_metadata(answer: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in answer.items() if name != "ResponseMetadata"}


_COMPARED_METADATA = ("HTTPStatusCode", "RetryAttempts", "MaxAttemptsReached")
"""What of ``ResponseMetadata`` two sends of one call share (not the request ids)."""


def _metadata(answer: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = answer["ResponseMetadata"]
    return {name: metadata[name] for name in _COMPARED_METADATA if name in metadata}


def _client_call(client: DynamoDBClient, operation: str, params: dict[str, Any]) -> Call:
    methods: dict[str, Callable[..., Awaitable[Any]]] = {
        "Query": client.query,
        "GetItem": client.get_item,
        "BatchGetItem": client.batch_get_item,
        "TransactWriteItems": client.transact_write_items,
    }
    method = methods[operation]

    async def call() -> dict[str, Any]:
        return dict(await method(**params))

    return call


def _direct_call(db: Db, operation: str, params: dict[str, Any]) -> Call:
    async def call() -> dict[str, Any]:
        return await _direct(db).call(operation, params)

    return call


async def _both(db: Db, operation: str, params: dict[str, Any]) -> tuple[Any, Any]:
    """The answers of the client's method and of the direct read, for the same params."""
    expected = await _client_call(db.client, operation, params)()
    got = await _direct(db).call(operation, params)
    return expected, got


async def _failure(call: Call) -> BaseException:
    with pytest.raises((ClientError, BotoCoreError, LeaderboardError)) as caught:
        await call()
    return caught.value


def _assert_same_error(expected: BaseException, got: BaseException) -> None:
    """The same exception: its class, its message, and (for an error answer) its ``Error``,
    its status and its retry counts."""
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, ClientError):
        assert isinstance(got, ClientError)
        assert got.operation_name == expected.operation_name
        assert got.response["Error"] == expected.response["Error"]
        assert _metadata(dict(got.response)) == _metadata(dict(expected.response))
    assert str(got) == str(expected)


def _assert_same_response(expected: BaseException, got: BaseException) -> None:
    """The error answers' whole responses are the same but for the request's own metadata
    (the members of the error's model that botocore's parser adds among them)."""
    assert isinstance(expected, ClientError)
    assert isinstance(got, ClientError)
    assert _without_metadata(dict(got.response)) == _without_metadata(dict(expected.response))


# --- 1. the signature ------------------------------------------------------------------------

_AT = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
_BODIES = [
    b"",
    b"{}",
    json.dumps(
        {"TableName": "t", "Key": {"pk": {"S": "caf\u00e9 \u2713"}, "sk": {"S": "a b"}}},
        ensure_ascii=False,
    ).encode(),
]


def _botocore_authorization(
    keys: FrozenKeys,
    region: str,
    url: str,
    operation: str,
    body: bytes,
    at: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[str, dict[str, str]]:
    """botocore's ``Authorization`` for the request, signed at ``at``, and the headers it
    signed (lower-cased)."""
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda: at.replace(tzinfo=None))
    request = AWSRequest(
        method="POST",
        url=url,
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"DynamoDB_20120810.{operation}",
        },
        data=body,
    )
    signer = SigV4Auth(
        Credentials(keys.access_key, keys.secret_key, keys.token), "dynamodb", region
    )
    signer.add_auth(request)
    authorization = str(request.headers["Authorization"])
    names = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    signed = {name.lower(): value for name, value in signer.headers_to_sign(request).items()}
    return authorization, {name: signed[name] for name in names}


@pytest.mark.parametrize(
    "keys",
    [
        FrozenKeys("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        FrozenKeys("ASIAEXAMPLE", "c2VjcmV0/+key", "FQoGZXIvYXdzEJr//////////wEaD+token=="),
    ],
    ids=["long-term", "session-token"],
)
@pytest.mark.parametrize(
    ("region", "url"),
    [
        ("us-east-1", "http://127.0.0.1:8000/"),
        ("eu-west-1", "https://dynamodb.eu-west-1.amazonaws.com/"),
    ],
    ids=["local", "aws"],
)
@pytest.mark.parametrize("body", _BODIES, ids=["empty", "object", "unicode"])
def test_signature_is_botocores(
    keys: FrozenKeys, region: str, url: str, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = url.split("/")[2]
    headers = SigV4(region, host).headers("Query", body, keys, _AT)
    expected, signed = _botocore_authorization(keys, region, url, "Query", body, _AT, monkeypatch)
    assert headers["authorization"] == expected
    # The headers sent are the ones signed, with botocore's values.
    assert {name: value for name, value in headers.items() if name != "authorization"} == signed
    assert sorted(signed) == sorted(
        ["content-type", "host", "x-amz-date", "x-amz-target"]
        + (["x-amz-security-token"] if keys.token else [])
    )


def test_signature_follows_the_day_and_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """One signer, its signing key kept for a day and a secret: signed again on another day,
    or with other credentials, it signs as botocore does then."""
    signer = SigV4("eu-west-1", "dynamodb.eu-west-1.amazonaws.com")
    url = "https://dynamodb.eu-west-1.amazonaws.com/"
    first = FrozenKeys("AKID1", "secret-one")
    rotated = FrozenKeys("AKID2", "secret-two", "token-two")
    days = [
        (first, _AT),
        (first, _AT.replace(hour=23, minute=59, second=59)),
        (first, _AT.replace(day=15, hour=0, minute=0, second=0)),
        (rotated, _AT.replace(day=15, hour=0, minute=0, second=1)),
        (first, _AT.replace(day=15, hour=0, minute=0, second=2)),
    ]
    seen = set()
    for keys, at in days:
        headers = signer.headers("GetItem", b"{}", keys, at)
        expected, _ = _botocore_authorization(
            keys, "eu-west-1", url, "GetItem", b"{}", at, monkeypatch
        )
        assert headers["authorization"] == expected, (keys, at)
        seen.add(expected)
    assert len(seen) == len(days)


# --- 2. answers ------------------------------------------------------------------------------


def _query(**extra: Any) -> Callable[[str], dict[str, Any]]:
    def params(table: str) -> dict[str, Any]:
        return {
            "TableName": table,
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "rich"}},
            **extra,
        }

    return params


QUERIES: dict[str, Callable[[str], dict[str, Any]]] = {
    "all": _query(),
    "page-forward": _query(Limit=2, ScanIndexForward=True),
    "page-backward": _query(Limit=2, ScanIndexForward=False),
    "capacity-total": _query(Limit=3, ReturnConsumedCapacity="TOTAL"),
    "capacity-indexes": _query(ReturnConsumedCapacity="INDEXES", ConsistentRead=True),
    "count": _query(Select="COUNT", ReturnConsumedCapacity="TOTAL"),
    "projection": _query(
        ProjectionExpression="#s, m.bin, l[2], bs",
        ExpressionAttributeNames={"#s": "sk"},
    ),
    "filter": _query(
        FilterExpression="t = :t",
        ExpressionAttributeValues={":p": {"S": "rich"}, ":t": {"BOOL": True}},
    ),
    "range": _query(
        KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
        ExpressionAttributeValues={
            ":p": {"S": "rich"},
            ":a": {"S": "sk-01"},
            ":b": {"S": "sk-03"},
        },
    ),
    "plain": _query(ExpressionAttributeValues={":p": {"S": "plain"}}, Limit=3),
    "empty": _query(ExpressionAttributeValues={":p": {"S": "nobody"}}),
    "index": lambda table: {
        "TableName": table,
        "IndexName": INDEX,
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "rich"}},
        "Limit": 2,
        "ReturnConsumedCapacity": "INDEXES",
    },
}


@pytest.mark.parametrize("name", QUERIES)
async def test_query_answers_are_the_clients(items: Db, name: str) -> None:
    params = QUERIES[name](items.table)
    expected, got = await _both(items, "Query", params)
    assert _without_metadata(got) == _without_metadata(expected)
    assert _metadata(got) == _metadata(expected)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    if "Limit" in params and name != "plain":
        assert "LastEvaluatedKey" in got
    if name != "count" and name != "empty":
        assert got["Items"], "the query reads items"
    if "ReturnConsumedCapacity" in params:
        assert "ConsumedCapacity" in got


async def test_query_answers_decode_binary_as_the_client_does(items: Db) -> None:
    """The binary values come back as the bytes written, at every depth."""
    got = await _direct(items).call("Query", QUERIES["all"](items.table))
    assert _canonical(got["Items"]) == _canonical(RICH)
    assert isinstance(got["Items"][0]["m"]["M"]["deep"]["L"][1]["M"]["bs"]["BS"][0], bytes)


@pytest.mark.parametrize("forward", [True, False], ids=["forward", "backward"])
async def test_query_pages_are_the_clients(items: Db, forward: bool) -> None:
    """Paging with each side's LastEvaluatedKey reads the same pages."""
    params = QUERIES["page-forward"](items.table) | {"ScanIndexForward": forward}
    pages: list[list[dict[str, Any]]] = []
    start: dict[str, Any] | None = None
    while True:
        page = params | ({"ExclusiveStartKey": start} if start is not None else {})
        expected, got = await _both(items, "Query", page)
        assert _without_metadata(got) == _without_metadata(expected)
        pages.append(got["Items"])
        start = got.get("LastEvaluatedKey")
        if start is None:
            break
    read = [item for page in pages for item in page]
    assert _canonical(read) == _canonical(RICH if forward else RICH[::-1])
    assert len(pages) == 3


def _key(item: dict[str, Any]) -> dict[str, Any]:
    return {"pk": item["pk"], "sk": item["sk"]}


GETS: dict[str, Callable[[str], dict[str, Any]]] = {
    "found": lambda table: {"TableName": table, "Key": _key(RICH[1])},
    "found-plain": lambda table: {"TableName": table, "Key": _key(PLAIN[2])},
    "not-found": lambda table: {"TableName": table, "Key": {"pk": {"S": "x"}, "sk": {"S": "y"}}},
    "projection": lambda table: {
        "TableName": table,
        "Key": _key(RICH[2]),
        "ProjectionExpression": "#m.bin, l[2], l[3].flag, ns, z",
        "ExpressionAttributeNames": {"#m": "m"},
    },
    "consistent-capacity": lambda table: {
        "TableName": table,
        "Key": _key(RICH[3]),
        "ConsistentRead": True,
        "ReturnConsumedCapacity": "TOTAL",
    },
    "not-found-capacity": lambda table: {
        "TableName": table,
        "Key": {"pk": {"S": "x"}, "sk": {"S": "y"}},
        "ReturnConsumedCapacity": "INDEXES",
    },
}


FOUND = ("found", "found-plain", "projection", "consistent-capacity")


@pytest.mark.parametrize("name", GETS)
async def test_get_item_answers_are_the_clients(items: Db, name: str) -> None:
    params = GETS[name](items.table)
    expected, got = await _both(items, "GetItem", params)
    assert _without_metadata(got) == _without_metadata(expected)
    assert _metadata(got) == _metadata(expected)
    assert ("Item" in got) is (
        name in ("found", "found-plain", "projection", "consistent-capacity")
    )


def _sorted_responses(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer of BatchGetItem with each table's items in key order (DynamoDB answers them
    in any order)."""
    responses = {
        table: sorted(found, key=lambda item: (item["pk"]["S"], item["sk"]["S"]))
        for table, found in answer.get("Responses", {}).items()
    }
    return _without_metadata(answer) | {"Responses": responses}


BATCHES: dict[str, Callable[[str], dict[str, Any]]] = {
    "several": lambda table: {
        "RequestItems": {
            table: {"Keys": [_key(RICH[0]), _key(PLAIN[1]), _key(RICH[4]), _key(PLAIN[3])]}
        }
    },
    "some-missing-capacity": lambda table: {
        "RequestItems": {
            table: {
                "Keys": [_key(RICH[2]), {"pk": {"S": "x"}, "sk": {"S": "y"}}, _key(PLAIN[0])],
                "ConsistentRead": True,
            }
        },
        "ReturnConsumedCapacity": "TOTAL",
    },
    "projection-indexes": lambda table: {
        "RequestItems": {
            table: {
                "Keys": [_key(item) for item in RICH],
                "ProjectionExpression": "pk, sk, b, m.deep",
            }
        },
        "ReturnConsumedCapacity": "INDEXES",
    },
    "plain": lambda table: {"RequestItems": {table: {"Keys": [_key(item) for item in PLAIN]}}},
}


@pytest.mark.parametrize("name", BATCHES)
async def test_batch_get_item_answers_are_the_clients(items: Db, name: str) -> None:
    params = BATCHES[name](items.table)
    expected, got = await _both(items, "BatchGetItem", params)
    assert _sorted_responses(got) == _sorted_responses(expected)
    assert _metadata(got) == _metadata(expected)
    assert got["Responses"][items.table]
    if "ReturnConsumedCapacity" in params:
        assert got["ConsumedCapacity"]


async def test_binary_parameters_are_sent_as_the_client_sends_them(items: Db) -> None:
    """The client takes binary values in the parameters as bytes (and base64-encodes them on
    the wire); the same parameters read the same answer directly."""
    target = RICH[2]
    params = _query(
        FilterExpression="b = :b",
        ExpressionAttributeValues={":p": {"S": "rich"}, ":b": {"B": target["b"]["B"]}},
    )(items.table)
    expected, got = await _both(items, "Query", params)
    assert _canonical(expected["Items"]) == _canonical([target])
    assert _without_metadata(got) == _without_metadata(expected)


# --- 2b. transactions ------------------------------------------------------------------------


def _written(pk: str, sk: str, n: int) -> dict[str, Any]:
    item = _rich(pk, sk, n)
    item["g"] = {"S": "written"}
    return item


def _puts(table: str, prefix: str) -> dict[str, Any]:
    return {
        "TransactItems": [
            {"Put": {"TableName": table, "Item": _written(prefix, "a", 1)}},
            {"Put": {"TableName": table, "Item": _written(prefix, "b", 2)}},
        ],
        "ReturnConsumedCapacity": "TOTAL",
    }


def _put_update_check(table: str, prefix: str) -> dict[str, Any]:
    return {
        "TransactItems": [
            {"Put": {"TableName": table, "Item": _written(prefix, "a", 3)}},
            {
                "Update": {
                    "TableName": table,
                    "Key": {"pk": {"S": prefix}, "sk": {"S": "c"}},
                    "UpdateExpression": "ADD n :one SET s = :s, b = :b",
                    "ExpressionAttributeValues": {
                        ":one": {"N": "1"},
                        ":s": {"S": "updated ✓"},
                        ":b": {"B": _binary(9)},
                    },
                }
            },
            {
                "ConditionCheck": {
                    "TableName": table,
                    "Key": _key(PLAIN[0]),
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
        ],
        "ReturnConsumedCapacity": "INDEXES",
        "ReturnItemCollectionMetrics": "SIZE",
    }


def _with_token(table: str, prefix: str) -> dict[str, Any]:
    return {
        "TransactItems": [{"Put": {"TableName": table, "Item": _written(prefix, "a", 4)}}],
        "ClientRequestToken": f"token-{prefix}",
    }


TRANSACTIONS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "puts": _puts,
    "put-update-check-capacity": _put_update_check,
    "with-token": _with_token,
}
"""Transactions writing under the partition ``prefix`` (and checking PLAIN's first item)."""


async def _items_under(db: Db, prefix: str) -> list[dict[str, Any]]:
    """The items of the partition ``prefix``, in key order, their ``pk`` left out."""
    answer = await db.client.query(
        TableName=db.table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": prefix}},
        ConsistentRead=True,
    )
    return [{k: v for k, v in item.items() if k != "pk"} for item in answer["Items"]]


@pytest.mark.parametrize("name", TRANSACTIONS)
async def test_transaction_answers_and_writes_are_the_clients(items: Db, name: str) -> None:
    """The same transaction, under two partitions of names of one length (the same sizes,
    so the same capacity): the same answer, and the same items written."""
    make = TRANSACTIONS[name]
    expected = await _client_call(items.client, "TransactWriteItems", make(items.table, "tx-c"))()
    got = await _direct(items).call("TransactWriteItems", make(items.table, "tx-d"))
    assert _without_metadata(got) == _without_metadata(expected)
    assert _metadata(got) == _metadata(expected)
    written = await _items_under(items, "tx-d")
    assert written
    assert _canonical(written) == _canonical(await _items_under(items, "tx-c"))


@pytest.mark.parametrize("binary", [True, False], ids=["binary-key", "text-key"])
async def test_item_collection_metrics_are_read_as_the_clients_parser_reads_them(
    items: Db, binary: bool
) -> None:
    """DynamoDB writes ItemCollectionMetrics only for a table with a local secondary index,
    which DynamoDB Local's tables here have none of: the same answer body, as AWS writes it
    (whole numbers for the size estimates), read by the direct calls and by the parser the
    client reads answers with."""
    key = {"pk": {"B": base64.b64encode(_binary(7)).decode()}} if binary else {"pk": {"S": "k"}}
    answer = {
        "ConsumedCapacity": [{"TableName": items.table, "CapacityUnits": 2}],
        "ItemCollectionMetrics": {
            items.table: [
                {"ItemCollectionKey": key, "SizeEstimateRangeGB": [0, 1]},
                {"ItemCollectionKey": key, "SizeEstimateRangeGB": [1.5, 2]},
            ]
        },
    }
    body = json.dumps(answer).encode()
    model = items.client.meta.service_model.operation_model("TransactWriteItems")
    response = {"status_code": 200, "headers": {}, "body": body}
    expected = await WireParserFactory().create_parser("json").parse(response, model.output_shape)
    got = parse_answer("TransactWriteItems", json.loads(body), binary=may_hold_binary(body))
    assert got == _without_metadata(expected)
    sizes = [m["SizeEstimateRangeGB"] for m in got["ItemCollectionMetrics"][items.table]]
    assert sizes == [[0.0, 1.0], [1.5, 2.0]]
    assert {type(n) for pair in sizes for n in pair} == {float}  # as the client's doubles
    read_key = got["ItemCollectionMetrics"][items.table][0]["ItemCollectionKey"]
    assert read_key == ({"pk": {"B": _binary(7)}} if binary else key)


async def test_a_cancelled_transaction_is_the_clients(items: Db) -> None:
    """A condition that fails cancels the whole transaction: the client's exception, with
    the same reasons (the item that failed it, binary values decoded), and nothing written."""

    def cancelled(prefix: str) -> dict[str, Any]:
        return {
            "TransactItems": [
                {"Put": {"TableName": items.table, "Item": _written(prefix, "a", 5)}},
                {
                    "ConditionCheck": {
                        "TableName": items.table,
                        "Key": _key(RICH[0]),
                        "ConditionExpression": "attribute_not_exists(pk)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
            ]
        }

    expected = await _failure(_client_call(items.client, "TransactWriteItems", cancelled("x-c")))
    got = await _failure(_direct_call(items, "TransactWriteItems", cancelled("x-d")))
    assert isinstance(expected, items.client.exceptions.TransactionCanceledException)
    _assert_same_error(expected, got)
    _assert_same_response(expected, got)
    assert isinstance(got, ClientError)
    reasons = got.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["None", "ConditionalCheckFailed"]
    assert _canonical(reasons[1]["Item"]) == _canonical(RICH[0])
    assert await _items_under(items, "x-d") == await _items_under(items, "x-c") == []


async def test_a_lost_answer_is_retried_with_the_token_botocore_fills_in(
    items: Db, proxied: Db, proxy: FaultProxy
) -> None:
    """DynamoDB applies the transaction and its answer is lost: the retry carries the token
    botocore gave the call, so DynamoDB answers it as done and applies nothing twice (the
    counter is 1, not 2); the watched write is settled by that answer, as with the client."""
    attach(proxied.client)

    def increment(prefix: str) -> dict[str, Any]:
        update = {
            "TableName": items.table,
            "Key": {"pk": {"S": prefix}, "sk": {"S": "c"}},
            "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
        return {"TransactItems": [{"Update": update}]}

    outcomes = []
    for prefix, call in (
        ("lost-c", _client_call(proxied.client, "TransactWriteItems", increment("lost-c"))),
        ("lost-d", _direct_call(proxied, "TransactWriteItems", increment("lost-d"))),
    ):
        with watching(prefix) as write:
            answer, sent = await _attempts(
                proxy, Rule(Fault.DROP_AFTER, "TransactWriteItems", times=1), call
            )
        assert isinstance(answer, dict), answer
        assert await _items_under(items, prefix) == [{"sk": {"S": "c"}, "n": {"N": "1"}}]
        outcomes.append((sent, write.attempts, write.outcome_unknown, _metadata(answer)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][:3] == (2, 2, False)


# --- 3. errors -------------------------------------------------------------------------------

ERRORS: dict[str, tuple[str, Callable[[str], dict[str, Any]], str]] = {
    "query-missing-table": (
        "Query",
        lambda table: QUERIES["all"](f"{table}-missing"),
        "ResourceNotFoundException",
    ),
    "query-bad-key-condition": (
        "Query",
        lambda table: QUERIES["all"](table) | {"KeyConditionExpression": "pk = = :p"},
        "ValidationException",
    ),
    "query-unknown-attribute-key": (
        "Query",
        lambda table: QUERIES["all"](table) | {"KeyConditionExpression": "nokey = :p"},
        "ValidationException",
    ),
    "get-missing-table": (
        "GetItem",
        lambda table: GETS["found"](f"{table}-missing"),
        "ResourceNotFoundException",
    ),
    "get-partial-key": (
        "GetItem",
        lambda table: {"TableName": table, "Key": {"pk": {"S": "rich"}}},
        "ValidationException",
    ),
    "batch-missing-table": (
        "BatchGetItem",
        lambda table: BATCHES["several"](f"{table}-missing"),
        "ResourceNotFoundException",
    ),
}


@pytest.mark.parametrize("name", ERRORS)
async def test_errors_are_the_clients(items: Db, name: str) -> None:
    operation, make, code = ERRORS[name]
    params = make(items.table)
    expected = await _failure(_client_call(items.client, operation, params))
    got = await _failure(_direct_call(items, operation, params))
    # The client's class for the code: a modelled one, else ClientError itself.
    raised: Any = items.client.exceptions.from_code(code)
    assert type(expected) is raised
    assert isinstance(expected, ClientError)
    assert expected.response["Error"]["Code"] == code
    _assert_same_error(expected, got)
    _assert_same_response(expected, got)
    assert isinstance(got, ClientError)
    assert got.response["ResponseMetadata"]["HTTPStatusCode"] == 400


# --- 4. hooks: the call counter, the retry policy, the circuit breaker -----------------------


async def test_call_counter_counts_direct_calls_once_each(
    items: Db, proxied: Db, proxy: FaultProxy
) -> None:
    counter = CallCounter(proxied.client)
    direct = _direct(proxied)
    await direct.call("Query", QUERIES["page-forward"](items.table))
    await direct.call("GetItem", GETS["found"](items.table))
    await direct.call("GetItem", GETS["not-found"](items.table))
    await direct.call("BatchGetItem", BATCHES["several"](items.table))
    await direct.call("TransactWriteItems", TRANSACTIONS["puts"](items.table, "tx-counted"))
    assert counter.snapshot() == {
        "Query": 1,
        "GetItem": 2,
        "BatchGetItem": 1,
        "TransactWriteItems": 1,
    }

    # A call retried is counted once.
    counter.reset()
    proxy.inject(Rule(Fault.THROTTLE, "Query", times=ATTEMPTS - 1))
    await direct.call("Query", QUERIES["all"](items.table))
    assert proxy.received["Query"] == ATTEMPTS
    assert counter.snapshot() == {"Query": 1}

    # A call that fails is counted too, once.
    counter.reset()
    await _failure(_direct_call(proxied, "Query", QUERIES["all"](f"{items.table}-missing")))
    assert counter.snapshot() == {"Query": 1}


TRANSIENT = {
    "throttle": Fault.THROTTLE,
    "provisioned": Fault.PROVISIONED,
    "server-error": Fault.SERVER_ERROR,
    "drop-before": Fault.DROP_BEFORE,
}


async def _attempts(proxy: FaultProxy, rule: Rule, call: Call) -> tuple[Any, int]:
    """The outcome of ``call`` (its answer, or the exception it raised) with ``rule`` on the
    proxy from zero, and the requests the proxy received meanwhile."""
    proxy.inject(replace(rule))
    try:
        outcome: Any = await call()
    except Exception as error:
        outcome = error
    received = sum(proxy.received.values())
    proxy.clear()
    return outcome, received


@pytest.mark.parametrize("fault", TRANSIENT.values(), ids=list(TRANSIENT))
async def test_a_fault_that_clears_is_retried_as_the_client_retries_it(
    items: Db, proxied: Db, proxy: FaultProxy, fault: Fault
) -> None:
    rule = Rule(fault, "Query", times=ATTEMPTS - 1)
    params = QUERIES["page-forward"](items.table)
    expected, sent = await _attempts(proxy, rule, _client_call(proxied.client, "Query", params))
    got, sent_directly = await _attempts(proxy, rule, _direct_call(proxied, "Query", params))
    assert isinstance(expected, dict), expected
    assert isinstance(got, dict), got
    assert sent == sent_directly == ATTEMPTS
    assert _without_metadata(got) == _without_metadata(expected)
    assert _metadata(got) == _metadata(expected)
    assert got["ResponseMetadata"]["RetryAttempts"] == ATTEMPTS - 1


@pytest.mark.parametrize("fault", TRANSIENT.values(), ids=list(TRANSIENT))
async def test_a_fault_that_lasts_fails_as_the_client_fails(
    items: Db, proxied: Db, proxy: FaultProxy, fault: Fault
) -> None:
    rule = Rule(fault, "Query")
    params = QUERIES["all"](items.table)
    expected, sent = await _attempts(proxy, rule, _client_call(proxied.client, "Query", params))
    got, sent_directly = await _attempts(proxy, rule, _direct_call(proxied, "Query", params))
    assert isinstance(expected, Exception), expected
    assert sent == sent_directly == ATTEMPTS
    _assert_same_error(expected, got)
    if isinstance(got, ClientError):
        metadata: dict[str, Any] = dict(got.response["ResponseMetadata"])
        assert metadata["RetryAttempts"] == ATTEMPTS - 1
        assert metadata["MaxAttemptsReached"] is True


ANSWERED = {name: fault for name, fault in TRANSIENT.items() if fault is not Fault.DROP_BEFORE}


@pytest.mark.parametrize("fault", ANSWERED.values(), ids=list(ANSWERED))
async def test_an_error_answer_as_aws_writes_it_is_the_clients(
    items: Db, proxied: Db, proxy: FaultProxy, fault: Fault
) -> None:
    """The proxy answers its errors as DynamoDB on AWS does (``{"__type": ..., "message":
    ...}``, where DynamoDB Local writes ``Message``): for the error's model, which has a
    ``message`` member, the client's response holds it beside ``Error``."""
    rule = Rule(fault, "GetItem")
    params = GETS["found"](items.table)
    expected, _ = await _attempts(proxy, rule, _client_call(proxied.client, "GetItem", params))
    got, _ = await _attempts(proxy, rule, _direct_call(proxied, "GetItem", params))
    _assert_same_error(expected, got)
    _assert_same_response(expected, got)


async def test_a_refusal_is_not_retried(items: Db, proxied: Db, proxy: FaultProxy) -> None:
    """An error DynamoDB will answer again (a missing table) is sent once, as by the client."""
    params = QUERIES["all"](f"{items.table}-missing")
    rule = Rule(Fault.DELAY, "Query", delay=0.0)  # counts, changes nothing
    expected, sent = await _attempts(proxy, rule, _client_call(proxied.client, "Query", params))
    got, sent_directly = await _attempts(proxy, rule, _direct_call(proxied, "Query", params))
    _assert_same_error(expected, got)
    _assert_same_response(expected, got)
    assert sent == sent_directly == 1


async def test_an_open_circuit_refuses_direct_calls_without_sending(
    items: Db, proxied: Db, proxy: FaultProxy
) -> None:
    breaker = CircuitBreaker(threshold=2, cooldown=60.0, clock=lambda: 0.0)
    breaker.attach(proxied.client)
    direct = _direct(proxied)
    params = QUERIES["all"](items.table)

    proxy.inject(Rule(Fault.PROVISIONED, "Query"))
    first = await _failure(_direct_call(proxied, "Query", params))
    assert isinstance(first, proxied.client.exceptions.ProvisionedThroughputExceededException)
    assert breaker.state == "closed"
    await _failure(_direct_call(proxied, "Query", params))
    assert breaker.state == "open"
    assert proxy.received["Query"] == 2 * ATTEMPTS

    proxy.clear()
    for operation, make in (
        ("Query", QUERIES["all"]),
        ("GetItem", GETS["found"]),
        ("BatchGetItem", BATCHES["several"]),
    ):
        with pytest.raises(LeaderboardError) as refused:
            await direct.call(operation, make(items.table))
        assert refused.value.code is ErrorCode.BACKEND_UNAVAILABLE
    assert sum(proxy.received.values()) == 2 * ATTEMPTS  # nothing more was sent


async def test_a_success_keeps_the_circuit_closed(
    items: Db, proxied: Db, proxy: FaultProxy
) -> None:
    """A direct call that succeeds counts as a success: failures must then come in a row."""
    breaker = CircuitBreaker(threshold=2, cooldown=60.0, clock=lambda: 0.0)
    breaker.attach(proxied.client)
    params = QUERIES["all"](items.table)
    proxy.inject(Rule(Fault.SERVER_ERROR, "Query", times=ATTEMPTS))
    await _failure(_direct_call(proxied, "Query", params))
    await _direct(proxied).call("Query", params)
    proxy.inject(Rule(Fault.SERVER_ERROR, "Query", times=ATTEMPTS))
    await _failure(_direct_call(proxied, "Query", params))
    assert breaker.state == "closed"
    await _failure(_direct_call(proxied, "Query", params | {"TableName": "missing"}))
    assert breaker.state == "closed"  # a refusal is no failure of the backend


# --- 5. transport errors ---------------------------------------------------------------------


async def test_a_refused_connection_fails_as_the_client_fails(
    settings: Settings, closed_port: int
) -> None:
    nowhere = replace(settings, endpoint_url=f"http://127.0.0.1:{closed_port}")
    async with open_table(nowhere, LOCAL_CREDENTIALS, config=_config()) as db:
        seen: list[int] = []

        def count(attempts: int, **_: Any) -> None:
            seen.append(attempts)

        db.client.meta.events.register("needs-retry.dynamodb.Query", count)
        breaker = CircuitBreaker(threshold=2, cooldown=60.0, clock=lambda: 0.0)
        breaker.attach(db.client)
        params = QUERIES["all"](db.table)

        expected = await _failure(_client_call(db.client, "Query", params))
        client_attempts, seen[:] = list(seen), []
        got = await _failure(_direct_call(db, "Query", params))
        assert isinstance(expected, EndpointConnectionError), expected
        assert isinstance(got, EndpointConnectionError), got
        assert str(got) == str(expected)
        assert seen == client_attempts == list(range(1, ATTEMPTS + 1))
        # Both failures count against the backend: the circuit is open.
        assert breaker.state == "open"


async def test_an_answer_that_never_comes_fails_as_the_client_fails(
    settings: Settings, proxy: FaultProxy
) -> None:
    """The proxy holds every request unanswered: each attempt meets the read timeout, retried
    up to the attempt limit, as by the client."""
    through = replace(settings, endpoint_url=proxy.url)
    config = _config().merge(AioConfig(read_timeout=0.2))
    async with open_table(through, LOCAL_CREDENTIALS, config=config) as db:
        released = asyncio.Event()
        rule = Rule(Fault.HOLD, "Query", released=released)
        params = QUERIES["all"](db.table)
        try:
            expected, sent = await _attempts(proxy, rule, _client_call(db.client, "Query", params))
            got, sent_directly = await _attempts(proxy, rule, _direct_call(db, "Query", params))
        finally:
            released.set()
        assert isinstance(expected, ReadTimeoutError), expected
        _assert_same_error(expected, got)
        assert sent == sent_directly == ATTEMPTS


async def test_a_refused_connection_leaves_no_write_unconfirmed(
    settings: Settings, closed_port: int
) -> None:
    """A transaction that found no connection to send on was sent to no one: its write is no
    OUTCOME_UNKNOWN but a clean refusal, whichever way it went."""
    nowhere = replace(settings, endpoint_url=f"http://127.0.0.1:{closed_port}")
    async with open_table(nowhere, LOCAL_CREDENTIALS, config=_config()) as db:
        attach(db.client)
        params = TRANSACTIONS["puts"](db.table, "refused")
        unknown = []
        for call in (
            _client_call(db.client, "TransactWriteItems", params),
            _direct_call(db, "TransactWriteItems", params),
        ):
            with watching("refused") as write:
                error = await _failure(call)
            assert isinstance(error, EndpointConnectionError), error
            unknown.append((write.attempts, write.outcome_unknown))
        assert unknown == [(ATTEMPTS, False), (ATTEMPTS, False)]
