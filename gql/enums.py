"""The enums of the schema, registered on the ``dynamo`` enums they mirror."""

from __future__ import annotations

import strawberry

from dynamo.leaderboards import Operator, Period, SortOrder

__all__ = ["Operator", "Period", "SortOrder"]

strawberry.enum(
    Period,
    name="LeaderboardPeriod",
    description="How long a board runs: a day, a week, a season, or for ever.",
)
strawberry.enum(
    SortOrder,
    name="SortOrder",
    description="Which scores are better: DESC, higher is better; ASC, lower (a time) is better.",
)
strawberry.enum(
    Operator,
    name="ScoreOperator",
    description=(
        "How a play changes a player's entry: BEST keeps the best score, LATEST the latest one, "
        "INCREMENT adds the score to the entry (a season's total distance, say)."
    ),
)
