"""The table's layout: every entity it holds, and which of them a stored item is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamo.claims import CLAIM
from dynamo.deliveries import DELIVERY
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.families import FAMILY
from dynamo.keys import Entity
from dynamo.leaderboards import ENTRY_COUNT_SHARD, LEADERBOARD, PARTITIONED_ENTRY_COUNT_SHARD
from dynamo.moderation import MODERATION
from dynamo.play_records import PLAY_RECORD
from dynamo.players import EMAIL_CLAIM, PLAYER
from dynamo.results import RESULT
from dynamo.scores import PARTITIONED_SCORE, SCORE
from dynamo.sessions import SESSION

__all__ = ["ENTITIES", "entity_of"]

ENTITIES: tuple[Entity, ...] = (
    PLAYER,
    LEADERBOARD,
    ENTRY_COUNT_SHARD,
    PARTITIONED_ENTRY_COUNT_SHARD,
    SCORE,
    PARTITIONED_SCORE,
    SESSION,
    ENTRY_GUARD,
    EMAIL_CLAIM,
    FAMILY,
    PLAY_RECORD,
    MODERATION,
    RESULT,
    CLAIM,
    DELIVERY,
)
"""In the order of the table in docs/explanation/table-design.md."""


def entity_of(item: Mapping[str, Any]) -> Entity | None:
    """The entity whose keys a stored item (or a key) has; None for none of them."""
    return next((entity for entity in ENTITIES if entity.holds(item)), None)
