"""Mutation inputs."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dynamo.plays import MAX_TARGETS
from gql.enums import Operator, Period, SortOrder
from gql.scalars import JSON, Long

__all__ = [
    "CreateLeaderboardFamilyInput",
    "CreateLeaderboardInput",
    "CreatePlayerInput",
    "SubmitScoreInput",
    "UpdateLeaderboardFamilyInput",
]

MIN_SCORE = (
    "Lowest score a play may enter, 0 to 10^scoreWidth - 1; a lower score is refused "
    "(SCORE_OUT_OF_RANGE). On INCREMENT boards it bounds each play's amount, not the total. "
    "Omit it for no bound but 0."
)
MAX_SCORE = (
    "Highest score a play may enter, minScore to 10^scoreWidth - 1; a higher score is refused "
    "(SCORE_OUT_OF_RANGE). On INCREMENT boards it bounds each play's amount, not the total. "
    "Omit it for no bound but the width."
)
PARTITIONS = (
    "How many partition keys the board's entries spread over, a power of two from 1 to 64: "
    "each takes some 1,000 writes a second on DynamoDB, and reading a page, a window or a "
    "counted rank of the board reads each of them. 1, the default, for a board of up to a "
    "couple of hundred plays a second. Any other value is INVALID_ARGUMENT."
)


@strawberry.input(description="A new player.")
class CreatePlayerInput:
    id: strawberry.ID | None = strawberry.field(
        default=None,
        description="Id to use (1-64 of A-Z a-z 0-9 _ . -); a fresh one is generated if omitted.",
    )
    name: str = strawberry.field(description="Display name, 1-100 printable characters.")
    email: str = strawberry.field(description="Login e-mail address; one player per address.")


@strawberry.input(
    description="A new leaderboard. Its id, sort order, operator, width and bounds never change."
)
class CreateLeaderboardInput:
    id: strawberry.ID = strawberry.field(description="Board id (1-64 of A-Z a-z 0-9 _ . -).")
    name: str = strawberry.field(description="Display name.")
    period: Period = strawberry.field(description="How long the board runs.")
    sort_order: SortOrder = strawberry.field(
        default=SortOrder.DESC, description="Which scores are better."
    )
    operator: Operator = strawberry.field(
        default=Operator.BEST, description="How a play changes a player's entry."
    )
    score_width: int = strawberry.field(default=10, description="Digits a score may have, 1 to 15.")
    min_score: Long | None = strawberry.field(default=None, description=MIN_SCORE)
    max_score: Long | None = strawberry.field(default=None, description=MAX_SCORE)
    starts_at: datetime | None = strawberry.field(
        default=None, description="First instant scores are accepted."
    )
    ends_at: datetime | None = strawberry.field(
        default=None, description="Instant from which scores are refused."
    )
    partitions: int = strawberry.field(default=1, description=PARTITIONS)


@strawberry.input(
    description="A new periodic leaderboard family. Nothing of it changes later but its "
    "partitions (updateLeaderboardFamily)."
)
class CreateLeaderboardFamilyInput:
    id: strawberry.ID = strawberry.field(description="Family id (1-40 of A-Z a-z 0-9 _ . -).")
    name: str = strawberry.field(description="Display name; each board adds its period.")
    period: Period = strawberry.field(description="DAILY, WEEKLY or SEASON.")
    timezone: str = strawberry.field(
        default="UTC", description="IANA time zone in which days and weeks begin."
    )
    sort_order: SortOrder = strawberry.field(
        default=SortOrder.DESC, description="Which scores are better."
    )
    operator: Operator = strawberry.field(
        default=Operator.BEST, description="How a play changes a player's entry."
    )
    score_width: int = strawberry.field(default=10, description="Digits a score may have, 1 to 15.")
    min_score: Long | None = strawberry.field(default=None, description=MIN_SCORE)
    max_score: Long | None = strawberry.field(default=None, description=MAX_SCORE)
    season_start: datetime | None = strawberry.field(
        default=None, description="Start of season 1 (required for SEASON)."
    )
    season_days: int | None = strawberry.field(
        default=None, description="Length of a season in days (required for SEASON)."
    )
    retention_days: int = strawberry.field(
        default=30, description="Days a board stays readable after its period ends (0-3650)."
    )
    partitions: int = strawberry.field(
        default=1,
        description="The partitions of the family's boards (see CreateLeaderboardInput."
        "partitions), a power of two from 1 to 64; anything else is INVALID_ARGUMENT. "
        "updateLeaderboardFamily changes it for the boards created afterwards.",
    )


@strawberry.input(description="A change to a periodic leaderboard family.")
class UpdateLeaderboardFamilyInput:
    id: strawberry.ID = strawberry.field(description="The family's id.")
    partitions: int = strawberry.field(
        description="The partitions of the family's boards created from now on (a power of two "
        "from 1 to 64; anything else is INVALID_ARGUMENT). The boards it has keep theirs, so "
        "raise it ahead of a busier period: tomorrow's daily board takes it."
    )


@strawberry.input(description="One play of a game, entered on one or more boards.")
class SubmitScoreInput:
    player_id: strawberry.ID = strawberry.field(description="Who played.")
    leaderboard_id: strawberry.ID | None = strawberry.field(
        default=None, description="The board to enter (or use leaderboardIds / familyIds)."
    )
    leaderboard_ids: list[strawberry.ID] | None = strawberry.field(
        default=None, description="Further boards to enter, in one transaction."
    )
    family_ids: list[strawberry.ID] | None = strawberry.field(
        default=None,
        description="Periodic families: the play enters each family's board of the current "
        f"period. At most {MAX_TARGETS} boards in all.",
    )
    game_id: strawberry.ID = strawberry.field(description="The game played.")
    score: Long = strawberry.field(
        description="The score, within the minScore and maxScore of each board (by default 0 "
        "to 10^scoreWidth - 1; for INCREMENT boards, the amount to add, while the total must "
        "stay within the width)."
    )
    duration_sec: int | None = strawberry.field(
        default=None, description="How long the play took, in seconds."
    )
    submission_id: strawberry.ID | None = strawberry.field(
        default=None,
        description="A ULID or UUID chosen by the game server. Sending the same submission "
        "again (within 7 days) records nothing more and returns the first result with "
        "duplicate: true; the same id with different content is SUBMISSION_ID_REUSED.",
    )
    metadata: JSON | None = strawberry.field(
        default=None,
        description="A JSON object about the play (a replay id, the level, the device), at most "
        "1 KiB as compact UTF-8 JSON and nested at most 8 deep. It is kept with the session "
        "and, while the play is a board's entry, with the entry (Session.metadata, "
        "Score.metadata). Any other value is INVALID_METADATA and nothing is written.",
    )
