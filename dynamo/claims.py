"""Reward claims: a final result's reward granted exactly once.

A claim is one item in the player's partition beside the result it claims, written by one
TransactWriteItems: a ConditionCheck that the result stands with a reward, and a Put of the
claim conditional on its absence. Of any number of concurrent claims of one result, one
writes the claim; every other finds it (``ALREADY_CLAIMED``, with the claim as it was
written, its time included), so a game server that grants its items on a successful claim
alone grants them once. The check on the result makes a claim racing the player's erasure
either come first (and be erased with the partition) or find no result. A claim touches
nothing but the player's own items.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import Item, serialize
from dynamo.keys import Entity
from dynamo.moderation import backoff
from dynamo.reads import get_items
from dynamo.resilience import is_backend_failure, unavailable
from dynamo.results import RESULT, get_results

__all__ = ["CLAIM", "ClaimItem", "ClaimOutcome", "claim_reward", "get_claims"]

CLAIM = Entity.declare("Reward claim", pk="PLAYER#{player_id}", sk="CLAIM#{leaderboard_id}")

_ATTEMPTS = 8
"""Attempts of a claim that meets another claim's transaction in flight on the same item."""


class ClaimItem(Item):
    player_id: str
    leaderboard_id: str
    claimed_at: datetime
    reward_id: str
    quantity: int
    actor: str
    """The fingerprint of the key that claimed (never the key)."""
    ttl: int | None = None
    """The result's: a claim expires with the result it claims."""


@dataclass(frozen=True)
class ClaimOutcome:
    """The claim of a result, and whether this call wrote it (False: it was claimed before,
    and ``claim`` is that first claim)."""

    claim: ClaimItem
    first: bool


async def get_claims(
    db: Db, pairs: list[tuple[str, str]], *, consistent: bool = False
) -> list[ClaimItem | None]:
    """Claims by (playerId, leaderboardId), in order, None where unclaimed."""
    keys = [CLAIM.key(player_id=p, leaderboard_id=b) for p, b in pairs]
    return await get_items(db, ClaimItem, keys, consistent=consistent)


async def claim_reward(
    db: Db, *, player_id: str, leaderboard_id: str, actor: str, at: datetime
) -> ClaimOutcome:
    """Claim the reward of the player's final result on the board. NO_REWARD (nothing
    written) when the player has no result there or its result has no reward."""
    try:
        for attempt in range(_ATTEMPTS):
            (result,) = await get_results(db, [(player_id, leaderboard_id)], consistent=True)
            if result is None or result.reward_id is None or result.reward_quantity is None:
                raise _no_reward(player_id, leaderboard_id, result is None)
            claim = ClaimItem(
                player_id=player_id,
                leaderboard_id=leaderboard_id,
                claimed_at=at,
                reward_id=result.reward_id,
                quantity=result.reward_quantity,
                actor=actor,
                ttl=result.ttl,
            )
            written = await _write(db, claim)
            if written is not None:
                return ClaimOutcome(claim, first=True) if written else await _first(db, claim)
            await backoff(attempt)
    except (BotoCoreError, ClientError) as error:
        if is_backend_failure(error):
            raise unavailable() from error
        raise
    raise LeaderboardError(
        ErrorCode.SUBMISSION_CONFLICT,
        f"claims of player {player_id!r}'s result on {leaderboard_id!r} kept meeting; "
        "send it again (it is granted at most once)",
        Subject.PLAYER,
    )


async def _write(db: Db, claim: ClaimItem) -> bool | None:
    """True when the claim was written, False when one stood already, None when the
    transaction met another in flight (try again). NO_REWARD when the result went."""
    result_key = RESULT.key_attributes(
        player_id=claim.player_id, leaderboard_id=claim.leaderboard_id
    )
    items: list[Any] = [
        {
            "ConditionCheck": {
                "TableName": db.table,
                "Key": serialize(result_key),
                "ConditionExpression": "attribute_exists(rewardId)",
            }
        },
        {
            "Put": {
                "TableName": db.table,
                "Item": serialize(CLAIM.item(claim)),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
    ]
    try:
        await db.transact_write_items(TransactItems=items)
    except ClientError as error:
        if error.response["Error"]["Code"] != "TransactionCanceledException":
            raise
        reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
        if reasons[:1] == ["ConditionalCheckFailed"]:
            raise _no_reward(claim.player_id, claim.leaderboard_id, True) from None
        if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
            return False
        return None
    return True


async def _first(db: Db, claim: ClaimItem) -> ClaimOutcome:
    (found,) = await get_claims(db, [(claim.player_id, claim.leaderboard_id)], consistent=True)
    if found is None:  # claimed, then erased with the player's partition in between
        raise _no_reward(claim.player_id, claim.leaderboard_id, True)
    return ClaimOutcome(found, first=False)


def _no_reward(player_id: str, leaderboard_id: str, missing: bool) -> LeaderboardError:
    why = "has no final result" if missing else "has a final result with no reward"
    return LeaderboardError(
        ErrorCode.NO_REWARD,
        f"player {player_id!r} {why} on {leaderboard_id!r}: nothing to claim",
        Subject.PLAYER,
    )
