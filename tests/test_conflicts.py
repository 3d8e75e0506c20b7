"""DynamoDB's transaction-conflict rule, as the fault proxy applies it (faultproxy.conflicts)
in front of the real DynamoDB Local, which runs transactions one after another and never
applies it itself.

The requests are sent with botocore through the proxy; each refusal is checked as botocore
parses it (the error code, the message, the cancellation reasons in request order), and the
table is read directly to see that a refused request wrote nothing.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from aiobotocore.config import AioConfig
from botocore.exceptions import ClientError

from dynamo.db import Db
from dynamo.leaderboards import ENTRY_COUNT_SHARD, LEADERBOARD, count_shard
from faultproxy import Fault, FaultProxy, ItemKey, Rule
from leaderboard.backend import LOCAL_CREDENTIALS, open_table
from leaderboard.config import Settings
from tests.conftest import Api, Table, _serve

TRANSACT = "TransactWriteItems"
ONGOING = {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
NONE = {"Code": "None"}
CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons"


@pytest.fixture
async def through(settings: Settings, table: Table, proxy: FaultProxy) -> AsyncIterator[Db]:
    """The test's table through the proxy: one attempt per call (botocore's retries would
    blur the counts) and enough connections for every request of a test at once."""
    config = AioConfig(
        max_pool_connections=500, retries={"mode": "standard", "total_max_attempts": 1}
    )
    async with open_table(
        replace(settings, endpoint_url=proxy.url), LOCAL_CREDENTIALS, config=config
    ) as db:
        yield db


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": "-"}}


def item(db: Db, pk: str) -> ItemKey:
    return ItemKey.of(db.table, pk=pk, sk="-")


def put(db: Db, pk: str) -> Any:
    return {"Put": {"TableName": db.table, "Item": {**key(pk), "n": {"N": "1"}}}}


def add(db: Db, pk: str) -> Any:
    return {
        "Update": {
            "TableName": db.table,
            "Key": key(pk),
            "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    }


def check(db: Db, pk: str) -> Any:
    return {
        "ConditionCheck": {
            "TableName": db.table,
            "Key": key(pk),
            "ConditionExpression": "attribute_exists(pk)",
        }
    }


async def refusal(call: Any) -> Any:
    """The error response of a call that must fail with a 400."""
    with pytest.raises(ClientError) as raised:
        await call
    response: Any = raised.value.response
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
    return response


async def stored(db: Db, pk: str) -> int | None:
    """The item's counter ``n``, read straight from DynamoDB Local; None when it is absent."""
    found = await db.client.get_item(TableName=db.table, Key=key(pk), ConsistentRead=True)
    return int(found["Item"]["n"]["N"]) if "Item" in found else None


async def test_a_transaction_touching_an_item_of_one_in_flight_is_cancelled(
    through: Db, table: Table, proxy: FaultProxy
) -> None:
    direct = table.db
    await direct.client.put_item(TableName=direct.table, Item={**key("board"), "n": {"N": "0"}})
    released = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, TRANSACT, times=1, released=released))
    conflicts = proxy.emulate_conflicts()
    first = asyncio.create_task(
        through.client.transact_write_items(
            TransactItems=[check(through, "board"), put(through, "a")]
        )
    )
    await proxy.wait_received(TRANSACT, 1)
    assert conflicts.holding() == {item(through, "board"), item(through, "a")}

    response = await refusal(
        through.client.transact_write_items(
            TransactItems=[add(through, "b"), check(through, "board")]
        )
    )
    assert response["Error"]["Code"] == "TransactionCanceledException"
    assert response["Error"]["Message"] == f"{CANCELLED} [None, TransactionConflict]"
    assert response["CancellationReasons"] == [NONE, ONGOING]

    # The holder's other item conflicts as well, wherever it stands in the request.
    response = await refusal(
        through.client.transact_write_items(
            TransactItems=[add(through, "a"), add(through, "c"), check(through, "board")]
        )
    )
    assert response["CancellationReasons"] == [ONGOING, NONE, ONGOING]

    released.set()
    await first
    assert conflicts.holding() == set()
    # Neither refused transaction reached DynamoDB Local, and neither wrote anything.
    assert (proxy.received[TRANSACT], proxy.forwarded[TRANSACT]) == (3, 1)
    assert (await stored(direct, "a"), await stored(direct, "b"), await stored(direct, "c")) == (
        1,
        None,
        None,
    )
    # Once the holder is answered, the same transaction goes through.
    await through.client.transact_write_items(
        TransactItems=[add(through, "b"), check(through, "board")]
    )
    assert await stored(direct, "b") == 1
    assert conflicts.conflicts == Counter({TRANSACT: 2})


async def test_transactions_on_distinct_items_never_conflict(
    through: Db, table: Table, proxy: FaultProxy
) -> None:
    conflicts = proxy.emulate_conflicts(hold=0.010)

    async def transact(n: int) -> None:
        while True:
            try:
                await through.client.transact_write_items(
                    TransactItems=[put(through, f"player-{n}"), put(through, f"entry-{n}")]
                )
                return
            except ClientError as error:
                # DynamoDB Local's own lock wait, which runs out on a loaded machine (it says
                # that DynamoDB would succeed): sent again, as botocore's retries would.
                if error.response["Error"]["Code"] != "InternalServerError":
                    raise

    await asyncio.gather(*(transact(n) for n in range(50)))
    assert conflicts.total == 0
    # They were in flight together, each holding its own items.
    assert conflicts.peak > 1
    assert set(conflicts.committed.values()) == {1}
    assert len(conflicts.committed) == 100
    assert [await stored(table.db, f"entry-{n}") for n in range(50)] == [1] * 50


async def test_a_single_write_on_an_item_held_by_a_transaction_conflicts(
    through: Db, table: Table, proxy: FaultProxy
) -> None:
    released = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, TRANSACT, times=1, released=released))
    conflicts = proxy.emulate_conflicts()
    transaction = asyncio.create_task(
        through.client.transact_write_items(TransactItems=[put(through, "x")])
    )
    await proxy.wait_received(TRANSACT, 1)

    update: Any = {
        "TableName": through.table,
        "Key": key("x"),
        "UpdateExpression": "ADD n :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }
    response = await refusal(through.client.update_item(**update))
    assert response["Error"] == {
        "Code": "TransactionConflictException",
        "Message": "Transaction is ongoing for the item",
    }
    response = await refusal(through.client.delete_item(TableName=through.table, Key=key("x")))
    assert response["Error"]["Code"] == "TransactionConflictException"
    # A read is never refused: it sees the item as it was before the transaction.
    assert "Item" not in await through.client.get_item(TableName=through.table, Key=key("x"))
    # A write on another item goes through.
    await through.client.update_item(**{**update, "Key": key("y")})

    released.set()
    await transaction
    await through.client.update_item(**update)
    assert await stored(table.db, "x") == 2
    assert conflicts.conflicts == Counter({"UpdateItem": 1, "DeleteItem": 1})
    assert conflicts.hottest() == [(item(through, "x"), 2)]


async def test_a_read_transaction_conflicts_with_any_write_in_flight(
    through: Db, table: Table, proxy: FaultProxy
) -> None:
    released = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, "UpdateItem", times=1, released=released))
    conflicts = proxy.emulate_conflicts()
    update = asyncio.create_task(
        through.client.update_item(
            TableName=through.table,
            Key=key("x"),
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    )
    await proxy.wait_received("UpdateItem", 1)

    gets: Any = [{"Get": {"TableName": through.table, "Key": key(pk)}} for pk in ("y", "x")]
    response = await refusal(through.client.transact_get_items(TransactItems=gets))
    assert response["Error"]["Code"] == "TransactionCanceledException"
    assert response["CancellationReasons"] == [NONE, ONGOING]
    # A write transaction on the item being written is cancelled too ...
    response = await refusal(
        through.client.transact_write_items(TransactItems=[put(through, "z"), add(through, "x")])
    )
    assert response["CancellationReasons"] == [NONE, ONGOING]
    # ... but another single write on it is not: DynamoDB runs those one after the other.
    await through.client.put_item(TableName=through.table, Item={**key("x"), "n": {"N": "5"}})

    released.set()
    await update
    assert await stored(table.db, "x") == 6
    answered = await through.client.transact_get_items(TransactItems=gets)
    assert [r.get("Item", {}).get("n") for r in answered["Responses"]] == [None, {"N": "6"}]
    assert conflicts.conflicts == Counter({"TransactGetItems": 1, TRANSACT: 1})
    assert conflicts.hottest() == [(item(through, "x"), 2)]


async def test_a_repeat_of_a_transaction_in_flight_is_in_progress(
    through: Db, table: Table, proxy: FaultProxy
) -> None:
    """A retry with the token of an attempt still in flight (one whose answer the client
    stopped waiting for) is told that the transaction is in progress, not that it conflicts
    with itself; once the first attempt is answered, the repeat is answered as applied."""
    released = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, TRANSACT, times=1, released=released))
    conflicts = proxy.emulate_conflicts()
    request: Any = {"TransactItems": [add(through, "x")], "ClientRequestToken": "the-one-play"}
    first = asyncio.create_task(through.client.transact_write_items(**request))
    await proxy.wait_received(TRANSACT, 1)
    response = await refusal(through.client.transact_write_items(**request))
    assert response["Error"]["Code"] == "TransactionInProgressException"
    released.set()
    await first
    await through.client.transact_write_items(**request)
    assert await stored(table.db, "x") == 1
    assert (conflicts.in_progress, conflicts.total) == (1, 0)


async def test_hundreds_of_transactions_checking_one_item_mostly_conflict(
    through: Db, table: Table, proxy: FaultProxy
) -> None:
    """DynamoDB Local accepts all of them, one after another; DynamoDB admits one at a time on
    the shared item, and cancels those that arrive while it is held."""
    direct = table.db
    await direct.client.put_item(TableName=direct.table, Item={**key("board"), "n": {"N": "0"}})
    conflicts = proxy.emulate_conflicts(hold=0.010)

    async def play(n: int) -> dict[str, Any] | None:
        """The error response of a cancelled transaction; None for an accepted one."""
        try:
            await through.client.transact_write_items(
                TransactItems=[put(through, f"play-{n}"), check(through, "board")]
            )
        except ClientError as error:
            response: Any = error.response
            return dict(response)
        return None

    outcomes = await asyncio.gather(*(play(n) for n in range(400)))
    cancelled = [response for response in outcomes if response is not None]
    accepted = [n for n, response in enumerate(outcomes) if response is None]
    assert len(cancelled) > len(accepted) > 0
    assert {r["Error"]["Code"] for r in cancelled} == {"TransactionCanceledException"}
    assert all(r["CancellationReasons"] == [NONE, ONGOING] for r in cancelled)
    # One transaction at a time held the item; each refusal is counted on it.
    assert conflicts.peak == 1
    board = item(through, "board")
    assert conflicts.conflicts == Counter({TRANSACT: len(cancelled)})
    assert conflicts.hottest() == [(board, len(cancelled))]
    assert conflicts.held[board] == conflicts.committed[board] == len(accepted)
    plays = [await stored(direct, f"play-{n}") for n in range(400)]
    assert [n for n, value in enumerate(plays) if value == 1] == accepted


async def test_the_counts_and_the_hottest_items_are_exact(
    through: Db, table: Table, proxy: FaultProxy
) -> None:
    released = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, TRANSACT, times=1, released=released))
    conflicts = proxy.emulate_conflicts()
    holder = asyncio.create_task(
        through.client.transact_write_items(
            TransactItems=[put(through, "board"), put(through, "p1")]
        )
    )
    await proxy.wait_received(TRANSACT, 1)
    for items in (
        [put(through, "p2"), check(through, "board")],
        [add(through, "p1"), check(through, "board"), put(through, "p3")],
        [check(through, "board")],
    ):
        await refusal(through.client.transact_write_items(TransactItems=items))
    await refusal(
        through.client.put_item(TableName=through.table, Item={**key("p1"), "n": {"N": "9"}})
    )
    # A transaction on other items is admitted while the holder waits.
    await through.client.transact_write_items(TransactItems=[put(through, "p4")])
    assert conflicts.peak == 2
    released.set()
    await holder

    board, p1, p4 = item(through, "board"), item(through, "p1"), item(through, "p4")
    assert conflicts.total == 4
    assert conflicts.conflicts == Counter({TRANSACT: 3, "PutItem": 1})
    assert conflicts.hottest() == [(board, 3), (p1, 2)]
    assert conflicts.held == conflicts.committed == Counter({board: 1, p1: 1, p4: 1})
    assert conflicts.report(n=1) == {
        "conflicts": 4,
        "byOperation": {"PutItem": 1, TRANSACT: 3},
        "admitted": {TRANSACT: 2},
        "inProgress": 0,
        "peak": 2,
        "hottest": [
            {"item": f"{through.table} pk=board sk=-", "conflicts": 3, "held": 1, "committed": 1}
        ],
    }
    assert (proxy.received[TRANSACT], proxy.forwarded[TRANSACT]) == (5, 2)
    proxy.reset_counts()
    assert (conflicts.total, conflicts.hottest(), conflicts.peak) == (0, [], 0)


@pytest.fixture
async def api(settings: Settings, proxy: FaultProxy) -> AsyncIterator[Api]:
    """The service, talking to DynamoDB through the proxy."""
    async with _serve(replace(settings, endpoint_url=proxy.url), None) as served:
        yield served


@pytest.fixture
async def other(settings: Settings, proxy: FaultProxy) -> AsyncIterator[Api]:
    """A second instance of the service on the same table, through the proxy too."""
    async with _serve(replace(settings, endpoint_url=proxy.url), None) as served:
        yield served


async def test_the_service_retries_a_first_entry_cancelled_for_a_conflict_on_its_count_shard(
    api: Api, other: Api, settings: Settings, proxy: FaultProxy
) -> None:
    """Two players whose entries count in the same shard of the board enter it at once,
    through two instances: the second first entry's transaction, sent while the first one's
    is held, is cancelled for the conflict on the shard, and the service reads again and
    retries it, unseen by the player. (Within one instance the second would wait for the
    first instead.)"""
    first_player = "p1"
    second_player = next(
        p
        for p in (f"p{n}" for n in range(2, 1000))
        if count_shard(p, 1) == count_shard(first_player, 1)
    )
    for player in (first_player, second_player):
        await api.create_player(player)
    await api.create_board("b")
    released = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, TRANSACT, times=1, released=released))
    conflicts = proxy.emulate_conflicts()
    first = asyncio.create_task(api.submit(first_player, "b", 10))
    await proxy.wait_received(TRANSACT, 1)
    second = asyncio.create_task(other.submit(second_player, "b", 20))
    await proxy.wait_conflicts(1)
    released.set()
    assert [p["errors"] for p in await asyncio.gather(first, second)] == [[], []]
    pk, sk = ENTRY_COUNT_SHARD.key(leaderboard_id="b", shard=count_shard(first_player, 1))
    # The shard's item, and it alone, was in conflict; the board's own item in no transaction.
    assert conflicts.conflicted.keys() == {ItemKey.of(settings.table, pk=pk, sk=sk)}
    assert conflicts.conflicts.keys() == {TRANSACT}
    board = ItemKey.of(settings.table, pk=pk, sk=LEADERBOARD.sk.fill())
    assert board not in conflicts.held
    assert proxy.forwarded[TRANSACT] == 2
    data = await api.gql('{ leaderboard(id: "b") { entryCount } }')
    assert data["leaderboard"]["entryCount"] == 2
