"""One conditional UpdateItem of a background job (a board's close, a player's rename) that
waits its turn behind the plays.

On DynamoDB a single write meeting an item that a transaction in flight holds fails with
``TransactionConflictException``. A play, which a player waits for, retries a few times
quickly; a background write instead is sent again after a jittered wait of up to a second,
many times, so that it gives way to the plays and still gets through.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from botocore.exceptions import ClientError

from dynamo.db import Db

__all__ = ["WRITE_ATTEMPTS", "update_when_free"]

WRITE_ATTEMPTS = 30
"""Attempts of one write that meets transactions in flight (up to a second between two)."""


async def update_when_free(db: Db, **request: Any) -> bool:
    """One UpdateItem (``request`` without the table's name); False when its condition failed,
    sent again after a jittered wait while it meets a transaction in flight."""
    for attempt in range(WRITE_ATTEMPTS):
        try:
            await db.client.update_item(TableName=db.table, **request)
        except ClientError as error:
            code = error.response["Error"]["Code"]
            if code == "ConditionalCheckFailedException":
                return False
            if code != "TransactionConflictException" or attempt == WRITE_ATTEMPTS - 1:
                raise
            await asyncio.sleep(random.uniform(0, min(1.0, 0.01 * 2**attempt)))
            continue
        return True
    raise AssertionError("unreachable")
