"""Player items: AP1 (by id) and AP2 (by e-mail), and player creation.

The keys are declared below: the Player item, and the e-mail claim (internal: one owner an
address). ``{email}`` is the normalised address (dynamo/emails.py). Rows written before
addresses were normalised hold the address's legacy form (trimmed, lower-cased): a lookup tries
that form after the normalised one, and a new player's transaction checks that no claim holds
it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dynamo.db import Db
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import Item, parse, serialize
from dynamo.keys import Entity
from dynamo.outcomes import watching
from dynamo.reads import batch_get, get_items
from dynamo.resilience import outcome_unknown
from dynamo.table import GSI1, Key

__all__ = [
    "EMAIL_CLAIM",
    "MAX_GAMES_PLAYED",
    "MAX_LIFETIME_SCORE",
    "PLAYABLE",
    "PLAYER",
    "PlayerItem",
    "create_player",
    "get_player",
    "get_player_by_email",
    "get_players",
    "read_player",
]

PLAYER = Entity.declare(
    "Player",
    pk="PLAYER#{player_id}",
    sk="#METADATA",
    gsi1=("PLAYER_EMAIL#{email}", "PLAYER#{player_id}"),
)
EMAIL_CLAIM = Entity.declare("E-mail claim", pk="PLAYER_EMAIL#{email}", sk="#CLAIM")

MAX_LIFETIME_SCORE = 10**15 - 1
"""The largest ``lifetimeScore`` a player may reach: what the GraphQL ``Long`` carries. A play
that would take the sum past it is refused (SCORE_OUT_OF_RANGE) and writes nothing."""
MAX_GAMES_PLAYED = 2**31 - 1
"""The largest ``gamesPlayed``: what a GraphQL ``Int`` carries."""
PLAYABLE = "attribute_not_exists(bannedAt) AND attribute_not_exists(erasingSince)"
"""The condition on the Player item under which its plays are recorded: not banned, not being
erased. A play's transaction holds it, so a play racing a ban or an erasure is refused."""


class PlayerItem(Item):
    player_id: str
    name: str
    email: str
    lifetime_score: int = 0
    games_played: int = 0
    created_at: datetime
    updated_at: datetime
    banned_at: datetime | None = None
    """Set while an operator's ban is in force: the player's plays are refused
    (PLAYER_BANNED)."""
    ban_reason: str | None = None
    ban_action_id: str | None = None
    """The moderation action of the ban in force: a ban sent again completes this one."""
    erasing_since: datetime | None = None
    """Set once an erasure of the player has begun: its plays are refused as a missing
    player's, and an erasure sent again goes on from where it stopped."""
    erased_entries: int | None = None
    """While erasing: the entries taken off boards so far."""
    erasure_searched_to: str | None = None
    """While erasing: the last moderation action whose reason the erasure has searched for
    the player (the log is searched in the order of the actions)."""
    name_version: int | None = None
    """Counts the player's renames (None before the first): the entries and results holding
    the player's name hold the version it is of (dynamo/renames.py)."""
    renaming: bool | None = None
    """True while a rename has entries or results left to write the new name into."""
    renamed_to: str | None = None
    """While renaming: the sort key of the last item of the player's partition the rename
    went through."""

    @property
    def banned(self) -> bool:
        return self.banned_at is not None


async def get_player(db: Db, player_id: str) -> PlayerItem | None:
    """AP1 for one id."""
    return (await get_players(db, [player_id]))[0]


async def read_player(db: Db, player_id: str) -> PlayerItem | None:
    """AP1 with ConsistentRead: the player as the last write left it (for moderation)."""
    found = await batch_get(db, [PLAYER.key(player_id=player_id)], consistent=True)
    raw = next(iter(found.values()), None)
    return parse(PlayerItem, raw) if raw is not None else None


async def get_players(db: Db, player_ids: Sequence[str]) -> list[PlayerItem | None]:
    """AP1 batched: one result per id, in order, None where missing."""
    return await get_items(db, PlayerItem, [PLAYER.key(player_id=p) for p in player_ids])


async def get_player_by_email(db: Db, email: str, legacy: str | None = None) -> PlayerItem | None:
    """AP2: Query GSI1 on the normalised address, then on its legacy form when it differs
    and the first found no one."""
    for form in dict.fromkeys(f for f in (email, legacy) if f is not None):
        response = await db.query(
            TableName=db.table,
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues=serialize({":pk": PLAYER.indexes[GSI1][0].fill(email=form)}),
            Limit=1,
        )
        items = response.get("Items", [])
        if items:
            return parse(PlayerItem, items[0])
    return None


async def create_player(db: Db, player: PlayerItem, legacy_email: str | None = None) -> PlayerItem:
    """Write a new player and claim its e-mail address, both or neither, provided no claim
    holds the address's legacy form either. botocore gives the transaction a
    ClientRequestToken and keeps it for its retries, so a retry of an attempt that was applied
    but not answered succeeds without writing again."""
    claim = {**EMAIL_CLAIM.keys(email=player.email), "playerId": player.player_id}
    legacy = (
        EMAIL_CLAIM.key(email=legacy_email)
        if legacy_email is not None and legacy_email != player.email
        else None
    )
    item = PLAYER.item(player)
    with watching(f"player {player.player_id!r}") as write:
        try:
            await _write_player(db, item, claim, legacy)
        except (BotoCoreError, ClientError) as error:
            if isinstance(error, ClientError):
                _raise_for_cancellation(error, player)
            if write.outcome_unknown:
                raise outcome_unknown(f" ({write.label}); creating it again tells") from error
            raise
    return player


async def _write_player(
    db: Db, item: dict[str, Any], claim: dict[str, Any], legacy: Key | None
) -> None:
    writes: list[Any] = [
        {
            "Put": {
                "TableName": db.table,
                "Item": serialize(item),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "Put": {
                "TableName": db.table,
                "Item": serialize(claim),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
    ]
    if legacy is not None:
        writes.append(
            {
                "ConditionCheck": {
                    "TableName": db.table,
                    "Key": serialize({"pk": legacy[0], "sk": legacy[1]}),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        )
    await db.transact_write_items(TransactItems=writes)


def _raise_for_cancellation(error: ClientError, player: PlayerItem) -> None:
    reasons = error.response.get("CancellationReasons", [])
    codes = [r.get("Code") for r in reasons]
    if codes and codes[0] == "ConditionalCheckFailed":
        raise LeaderboardError(
            ErrorCode.PLAYER_EXISTS,
            f"player {player.player_id!r} already exists",
            Subject.PLAYER,
        ) from None
    if "ConditionalCheckFailed" in codes[1:]:
        raise LeaderboardError(
            ErrorCode.EMAIL_TAKEN, "that email belongs to another player", Subject.EMAIL
        ) from None
