"""The enums of the schema, registered on the ``dynamo`` enums they mirror."""

from __future__ import annotations

from enum import Enum

import strawberry
from strawberry.types.enum import StrawberryEnumDefinition

from dynamo.leaderboards import Operator, Period, SortOrder

__all__ = ["Operator", "Period", "SortOrder"]


def _register(enum: type[Enum], name: str, description: str, values: dict[Enum, str]) -> None:
    """Register ``enum`` as a GraphQL enum, each value with its description."""
    strawberry.enum(enum, name=name, description=description)
    definition = getattr(enum, "__strawberry_definition__", None)
    assert isinstance(definition, StrawberryEnumDefinition)
    for value in definition.values:
        value.description = values[enum[value.name]]


_register(
    Period,
    "LeaderboardPeriod",
    "How long a board runs.",
    {
        Period.DAILY: "One day (a family's daily board runs from local midnight to midnight).",
        Period.WEEKLY: "One ISO week, Monday to Sunday.",
        Period.SEASON: "A season: fixed dates, or a family's fixed-length season.",
        Period.GLOBAL: "For ever (all-time).",
    },
)
_register(
    SortOrder,
    "SortOrder",
    "Which scores are better.",
    {
        SortOrder.DESC: "Higher is better (points).",
        SortOrder.ASC: "Lower is better (a lap time, strokes).",
    },
)
_register(
    Operator,
    "ScoreOperator",
    "How a play changes a player's entry on a board.",
    {
        Operator.BEST: "The entry is the player's best score; an equal score keeps the earlier.",
        Operator.LATEST: "The entry is the player's latest score.",
        Operator.INCREMENT: "The entry is the sum of the player's scores (a season's distance).",
    },
)
