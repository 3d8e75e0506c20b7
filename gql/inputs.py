"""Mutation inputs."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dynamo.plays import MAX_TARGETS
from dynamo.rewards import MAX_QUANTITY, MAX_REWARD_ID, MAX_TIERS
from gql.enums import Operator, Period, SortOrder, TierKind
from gql.scalars import JSON, Long
from resolvers.inputs import MAX_ARCHIVE_DAYS, PERCENT_DECIMALS, TierArguments

__all__ = [
    "ClaimRewardInput",
    "CreateLeaderboardFamilyInput",
    "CreateLeaderboardInput",
    "CreatePlayerInput",
    "RewardTierInput",
    "SubmitScoreInput",
    "UpdateLeaderboardFamilyInput",
    "tier_arguments",
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
ARCHIVE_DAYS = (
    "How many days after the board's endsAt its final standings (Leaderboard.finalStandings "
    f"and finalResult, Player.results) are kept, 0 to {MAX_ARCHIVE_DAYS}; any other value is "
    "INVALID_ARGUMENT. Omit it to keep them for ever."
)
FAMILY_ARCHIVE_DAYS = (
    "How many days after each of the family's boards ends its final standings are kept (see "
    f"CreateLeaderboardInput.archiveDays), 0 to {MAX_ARCHIVE_DAYS}; any other value is "
    "INVALID_ARGUMENT. Omit it to keep them for ever."
)
REWARD_TIERS = (
    f"What the board's final standings give, at most {MAX_TIERS} tiers, in order: at the "
    "board's close each entrant's result takes the first tier it qualifies for (in the order "
    "given), and that tier's reward. Ranks are standard competition ranks, so entrants who tie "
    "share a rank and with it a tier (three tied for 10th are all within ranks 4 to 10, and "
    "the next is 13th). A tier that is not well formed (see RewardTierInput), or more than "
    f"{MAX_TIERS}, is INVALID_ARGUMENT at rewardTiers, and nothing is written. Omit it (or "
    "give an empty list) for no reward."
)
FAMILY_REWARD_TIERS = (
    "The reward tiers of each of the family's boards (see CreateLeaderboardInput.rewardTiers; "
    "each SCORE threshold within the family's scoreWidth)."
)
PARTITIONS = (
    "How many partition keys the board's entries spread over, a power of two from 1 to 64: "
    "each takes some 1,000 writes a second on DynamoDB, and reading a page, a window or a "
    "counted rank of the board reads each of them. 1, the default, for a board of up to a "
    "couple of hundred plays a second. Any other value is INVALID_ARGUMENT."
)


@strawberry.input(
    description="One reward tier of a board's final standings: which entrants it takes, by "
    "the one threshold its kind takes (the others null or omitted), and what it gives each of "
    "them. An entrant takes the first tier of the board's list it qualifies for."
)
class RewardTierInput:
    kind: TierKind = strawberry.field(description="Which entrants the tier takes.")
    reward_id: str = strawberry.field(
        description=f"What the tier gives, as the game names it: 1 to {MAX_REWARD_ID} "
        "characters of A-Z a-z 0-9 _ . : -."
    )
    quantity: int | None = strawberry.field(
        default=1,
        description=f"How many of it each entrant of the tier gets, 1 to {MAX_QUANTITY}; "
        "null reads as 1.",
    )
    from_rank: int | None = strawberry.field(
        default=None, description="RANKS (required): the first rank of the tier, 1 or more."
    )
    to_rank: int | None = strawberry.field(
        default=None,
        description="RANKS: the last rank of the tier, included, not below fromRank; null for "
        "no upper bound.",
    )
    top_percent: float | None = strawberry.field(
        default=None,
        description="TOP_PERCENT (required): the share of the entrants, in per cent, above 0 "
        f"and at most 100, with at most {PERCENT_DECIMALS} decimals (kept exact as the decimal "
        "written). The tier takes the ranks up to ceil(total * topPercent / 100) of the total "
        "entrants, and at least rank 1.",
    )
    score: Long | None = strawberry.field(
        default=None,
        description="SCORE (required): the threshold an entrant's score must reach (the score "
        "or more on a DESC board, the score or less on an ASC board), within the scores of the "
        "board's scoreWidth.",
    )


def tier_arguments(tiers: list[RewardTierInput] | None) -> list[TierArguments] | None:
    """The tiers as the resolvers check them."""
    if tiers is None:
        return None
    return [
        TierArguments(
            kind=t.kind,
            reward_id=t.reward_id,
            quantity=t.quantity,
            from_rank=t.from_rank,
            to_rank=t.to_rank,
            top_percent=t.top_percent,
            score=int(t.score) if t.score is not None else None,
        )
        for t in tiers
    ]


@strawberry.input(description="The final result whose reward to claim.")
class ClaimRewardInput:
    leaderboard_id: strawberry.ID = strawberry.field(description="The board, FINAL.")
    player_id: strawberry.ID = strawberry.field(description="The player whose result it is.")


@strawberry.input(description="A new player.")
class CreatePlayerInput:
    id: strawberry.ID | None = strawberry.field(
        default=None,
        description="Id to use (1-64 of A-Z a-z 0-9 _ . -); a fresh one is generated if omitted.",
    )
    name: str = strawberry.field(description="Display name, 1-100 printable characters.")
    email: str = strawberry.field(description="Login e-mail address; one player per address.")


@strawberry.input(description="A player's new name.")
class RenamePlayerInput:
    player_id: strawberry.ID = strawberry.field(description="The player.")
    name: str = strawberry.field(description="The new display name, 1-100 printable characters.")


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
    archive_days: int | None = strawberry.field(default=None, description=ARCHIVE_DAYS)
    reward_tiers: list[RewardTierInput] | None = strawberry.field(
        default=None, description=REWARD_TIERS
    )


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
    archive_days: int | None = strawberry.field(default=None, description=FAMILY_ARCHIVE_DAYS)
    reward_tiers: list[RewardTierInput] | None = strawberry.field(
        default=None, description=FAMILY_REWARD_TIERS
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
