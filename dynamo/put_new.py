"""Creating an item that must not exist yet, safely under retries.

botocore retries a PutItem whose answer was lost (a dropped connection, a 5xx). If the lost
attempt had written the item, the retry fails its ``attribute_not_exists`` condition, and a
plain conditional put would report "already exists" for the caller's own write. The put asks
for the item that stopped it (``ReturnValuesOnConditionCheckFailure``): when that item is
exactly the one being written, the write is the caller's own and it succeeded.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dynamo.db import Db
from dynamo.items import deserialize, serialize
from dynamo.outcomes import watching
from dynamo.resilience import outcome_unknown

__all__ = ["put_new"]


async def put_new(db: Db, item: dict[str, Any], what: str) -> bool:
    """Write ``item`` unless an item with its key exists; False when another one does.
    OUTCOME_UNKNOWN when the database never confirmed an attempt that may have written it
    (``what`` names the item in the message)."""
    attributes = serialize(item)
    with watching(what) as write:
        try:
            await db.client.put_item(
                TableName=db.table,
                Item=attributes,
                ConditionExpression="attribute_not_exists(pk)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except (BotoCoreError, ClientError) as error:
            if (
                isinstance(error, ClientError)
                and error.response["Error"]["Code"] == "ConditionalCheckFailedException"
            ):
                existing: Any = error.response.get("Item")
                return existing is not None and deserialize(existing) == deserialize(attributes)
            if write.outcome_unknown:
                raise outcome_unknown(f" ({what}); creating it again tells") from error
            raise
    return True
