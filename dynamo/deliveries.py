"""The webhook outbox: the closed boards whose final results are still to be pushed to the game.

A board's close (dynamo/closing.py, with ``outbox``) puts one Delivery item beside the board's
own item, just before it makes the board FINAL, when the board has at least one entrant. While
its results are not all delivered the item is in GSI1's ``WEBHOOK_OUTBOX`` partition, under
``<closedKey>#<leaderboardId>`` (``closedKey``: its ``closedAt`` in epoch milliseconds, 13
digits), so the deliverer (leaderboard/webhooks.py) lists the pending boards in the order they
closed with one Query. The item holds all the delivery's state, so a deliverer restarted
anywhere goes on from it:

- ``delivered``: how many results, in position order, the receiver has acknowledged; the next
  batch begins at position ``delivered + 1``;
- ``attempts``: failed attempts in a row of that batch, ``nextAttemptAt`` when it is sent
  again, ``lastStatus`` (the HTTP status, if any) and ``lastError`` of the last failure.

Each change is one UpdateItem conditional on the state the deliverer read, so two deliverers
at once never move it twice. Once every result is delivered the item leaves the index (its
GSI1 keys removed) and stays, with ``deliveredAt``, as the record of the delivery, as long as
the board's results (their ``ttl``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from dynamo.db import Db
from dynamo.items import Item, parse, serialize, stamp
from dynamo.keys import Entity
from dynamo.leaderboards import close_due
from dynamo.reads import get_items, query_items
from dynamo.results import POSITION_DIGITS, RESULT, ResultItem
from dynamo.table import GSI1, GSI2

__all__ = [
    "DELIVERY",
    "DeliveryItem",
    "get_delivery",
    "pending_deliveries",
    "put_delivery",
    "record_delivered",
    "record_failure",
    "results_between",
]

DELIVERY = Entity.declare(
    "Webhook delivery",
    pk="LEADERBOARD#{leaderboard_id}",
    sk="DELIVERY",
    gsi1=("WEBHOOK_OUTBOX", "{closed_key}#{leaderboard_id}"),
)

_NAMES = {
    "#delivered": "delivered",
    "#attempts": "attempts",
    "#next": "nextAttemptAt",
    "#error": "lastError",
    "#status": "lastStatus",
}
"""The attributes the updates name (through names: a plain name may be a reserved word)."""


class DeliveryItem(Item):
    leaderboard_id: str
    total: int
    """The board's entrants (its ``finalCount``): the positions to deliver are 1 to ``total``."""
    closed_at: datetime
    """When the close that put the item made the board final (the board's ``closedAt``, but
    for two closes at once, which put one item and finish at instants apart)."""
    delivered: int = 0
    """Results, in position order, that the receiver has acknowledged."""
    attempts: int = 0
    """Failed attempts in a row of the batch that begins at ``delivered + 1``."""
    next_attempt_at: datetime | None = None
    """When that batch is sent again after a failure; None: as soon as it is ready."""
    last_status: int | None = None
    """The HTTP status of the last answer, when there was one."""
    last_error: str | None = None
    """What went wrong with the last failed attempt."""
    delivered_at: datetime | None = None
    """When the last batch was acknowledged; None while results remain to be delivered."""
    ttl: int | None = None
    """Epoch seconds: the board's results' expiry; None to keep it for ever."""

    @property
    def pending(self) -> bool:
        return self.delivered_at is None

    def index_values(self) -> dict[str, str | None]:
        """The values the index templates take beyond the item's attributes: ``closed_key``
        while the delivery is pending (in the outbox), None once done (out of the index)."""
        return {"closed_key": close_due(self.closed_at) if self.pending else None}


async def put_delivery(
    db: Db, *, leaderboard_id: str, total: int, closed_at: datetime, ttl: int | None
) -> bool:
    """Put the board's Delivery item in the outbox, unless it has one already (a close that
    stopped after putting it and runs again); whether this call put it."""
    item = DeliveryItem(leaderboard_id=leaderboard_id, total=total, closed_at=closed_at, ttl=ttl)
    try:
        await db.client.put_item(
            TableName=db.table,
            Item=serialize(DELIVERY.item(item, **item.index_values())),
            ConditionExpression="attribute_not_exists(pk)",
        )
    except ClientError as error:
        if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
            return False
        raise
    return True


async def get_delivery(db: Db, leaderboard_id: str) -> DeliveryItem | None:
    """The board's Delivery item, read consistently; None for none."""
    (found,) = await get_items(
        db, DeliveryItem, [DELIVERY.key(leaderboard_id=leaderboard_id)], consistent=True
    )
    return found


async def pending_deliveries(db: Db, limit: int) -> list[DeliveryItem]:
    """Up to ``limit`` Delivery items of the outbox, those that closed first first (boards that
    closed at the same instant in the order of their ids). GSI1 is eventually consistent: an
    item may be shown as it was a moment ago (read it with :func:`get_delivery` to act on it)."""
    ipk, _ = DELIVERY.indexes[GSI1]
    raw = await query_items(
        db,
        key_condition="gsi1pk = :pk",
        values={":pk": ipk.fill()},
        limit=limit,
        index=GSI1,
        descending=False,
    )
    return [parse(DeliveryItem, r) for r in raw]


async def results_between(db: Db, leaderboard_id: str, first: int, last: int) -> list[ResultItem]:
    """The board's results at positions ``first`` to ``last``, in position order (GSI2,
    eventually consistent: a result written a moment ago may be missing, and so is the result
    of a player erased since the close)."""
    ipk, isk = RESULT.indexes[GSI2]
    raw = await query_items(
        db,
        key_condition="gsi2pk = :pk AND gsi2sk BETWEEN :low AND :high",
        values={
            ":pk": ipk.fill(leaderboard_id=leaderboard_id),
            ":low": isk.fill(position_key=f"{first:0{POSITION_DIGITS}d}"),
            ":high": isk.fill(position_key=f"{last:0{POSITION_DIGITS}d}"),
        },
        limit=max(0, last - first + 1),
        index=GSI2,
        descending=False,
    )
    return [parse(ResultItem, r) for r in raw]


async def record_delivered(
    db: Db, delivery: DeliveryItem, upto: int, *, status: int | None, at: datetime
) -> bool:
    """The receiver acknowledged the results up to position ``upto`` with HTTP ``status``
    (None: there was none left to send): ``delivered`` moves there (and, at ``total``, the
    item leaves the outbox with ``deliveredAt``), its failures are cleared. False when the
    item was not as read (another deliverer moved it)."""
    values: dict[str, Any] = {":upto": upto, ":zero": 0, ":was": delivery.delivered}
    assign = "#delivered = :upto, #attempts = :zero"
    if status is not None:
        assign += ", #status = :status"
        values[":status"] = status
    remove = "#next, #error"
    if upto >= delivery.total:
        assign += ", deliveredAt = :at"
        values[":at"] = stamp(at)
        remove += ", gsi1pk, gsi1sk"
    return await _update(
        db,
        delivery,
        f"SET {assign} REMOVE {remove}",
        "#delivered = :was AND attribute_not_exists(deliveredAt)",
        values,
    )


async def record_failure(
    db: Db,
    delivery: DeliveryItem,
    *,
    status: int | None,
    error: str,
    next_attempt_at: datetime,
) -> bool:
    """An attempt of the batch at ``delivered + 1`` failed: one more attempt counted, the
    failure recorded, the next attempt at ``next_attempt_at``. False when the item was not as
    read (another deliverer moved it)."""
    values: dict[str, Any] = {
        ":was": delivery.delivered,
        ":tried": delivery.attempts,
        ":one": 1,
        ":next": stamp(next_attempt_at),
        ":error": error,
    }
    assign = "#attempts = #attempts + :one, #next = :next, #error = :error"
    if status is None:
        update = f"SET {assign} REMOVE #status"
    else:
        values[":status"] = status
        update = f"SET {assign}, #status = :status"
    return await _update(
        db,
        delivery,
        update,
        "#delivered = :was AND #attempts = :tried AND attribute_not_exists(deliveredAt)",
        values,
    )


async def _update(
    db: Db, delivery: DeliveryItem, update: str, condition: str, values: dict[str, Any]
) -> bool:
    names = {name: attribute for name, attribute in _NAMES.items() if name in update + condition}
    try:
        await db.client.update_item(
            TableName=db.table,
            Key=serialize(DELIVERY.key_attributes(leaderboard_id=delivery.leaderboard_id)),
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=serialize(values),
        )
    except ClientError as error:
        if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
            return False
        raise
    return True
