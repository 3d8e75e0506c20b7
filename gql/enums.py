"""The enums of the schema, registered on the ``dynamo`` enums they mirror."""

from __future__ import annotations

from enum import Enum

import strawberry
from strawberry.types.enum import StrawberryEnumDefinition

from dynamo import moderation as removals
from dynamo import play_writes
from dynamo.errors import ErrorCode
from dynamo.families import MAX_RETENTION_DAYS, MAX_SEASON_DAYS
from dynamo.leaderboards import (
    MAX_PARTITIONS,
    MAX_SCORE_WIDTH,
    BoardStatus,
    Operator,
    Period,
    SortOrder,
)
from dynamo.moderation import ModerationAction
from dynamo.players import MAX_GAMES_PLAYED, MAX_LIFETIME_SCORE
from dynamo.plays import MAX_DURATION_SEC, MAX_TARGETS
from dynamo.rewards import MAX_QUANTITY, MAX_REWARD_ID, MAX_TIERS, TierKind
from resolvers.inputs import MAX_ARCHIVE_DAYS, MAX_IDS, MAX_PAGE_SIZE
from resolvers.moderation import MAX_REASON
from resolvers.ranks import MAX_AROUND

__all__ = [
    "BoardStatus",
    "ErrorCode",
    "ModerationAction",
    "Operator",
    "Period",
    "SortOrder",
    "TierKind",
]


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
_register(
    BoardStatus,
    "LeaderboardStatus",
    "Where a board stands in its life: taking plays, being closed, or closed for good.",
    {
        BoardStatus.LIVE: "The board takes plays, from its startsAt if it has one, until its "
        "endsAt (for ever without one).",
        BoardStatus.CLOSING: "Its period is over and its final standings are being written: "
        "it takes no play.",
        BoardStatus.FINAL: "Its final standings are written (finalStandings, finalResult) and "
        "never change.",
    },
)
_register(
    TierKind,
    "RewardTierKind",
    "Which entrants a reward tier takes, by their place in the board's final standings.",
    {
        TierKind.RANKS: "The ranks from fromRank to toRank, both included (no upper bound when "
        "toRank is null): 1 to 1 for the winners, 2 to 3, 4 to 10.",
        TierKind.TOP_PERCENT: "The first topPercent per cent of the entrants: the ranks up to "
        "ceil(total * topPercent / 100), and at least rank 1 however few entered (top 1% of "
        "1,000 entrants: ranks 1 to 10).",
        TierKind.SCORE: "A score at least as good as the tier's score: that score or more on a "
        "DESC board, that score or less on an ASC board.",
    },
)
_register(
    ErrorCode,
    "ErrorCode",
    "Why a mutation wrote nothing (UserError.code), or why a request or a field failed "
    "(extensions.code of a GraphQL error). New codes may be added in a minor release: keep a "
    "default branch when switching on them.",
    {
        ErrorCode.INVALID_ID: "An id outside [A-Za-z0-9_.-]{1,64} (a '#' or any other character "
        "outside that set would break the table's key layout, so it is refused before anything "
        "is written), or a session id that is not a ULID.",
        ErrorCode.INVALID_EMAIL: "A malformed e-mail address.",
        ErrorCode.INVALID_NAME: "An empty, overlong or unprintable name.",
        ErrorCode.INVALID_ARGUMENT: "An argument out of its range or inconsistent with another; "
        f"nothing was written. The ranges: first from 0 to {MAX_PAGE_SIZE}; at most {MAX_IDS} "
        f"ids in a list; around's before and after from 0 to {MAX_AROUND}; a play names 1 to "
        f"{MAX_TARGETS} boards and families, with a durationSec from 0 to {MAX_DURATION_SEC}; "
        f"a scoreWidth from 1 to {MAX_SCORE_WIDTH}, a minScore and a maxScore within the "
        "scores of the width, minScore not above maxScore; endsAt after startsAt; a time from "
        f"1970 to 2999; partitions a power of two from 1 to {MAX_PARTITIONS}; a family's period "
        "DAILY, WEEKLY or SEASON (a SEASON family with seasonStart and seasonDays), its time "
        f"zone a known one, seasonDays from 1 to {MAX_SEASON_DAYS} and retentionDays from 0 to "
        f"{MAX_RETENTION_DAYS}; a board's or a family's archiveDays from 0 to "
        f"{MAX_ARCHIVE_DAYS}; at most {MAX_TIERS} reward tiers, each well formed (see "
        f"RewardTierInput: a rewardId of 1 to {MAX_REWARD_ID} characters, a quantity from 1 to "
        f"{MAX_QUANTITY}); a moderation reason of 1 to {MAX_REASON} printable characters, "
        "and an erasure's reason that does not name the player.",
        ErrorCode.INVALID_CURSOR: "A cursor this server did not issue for this list.",
        ErrorCode.INVALID_METADATA: "A play's metadata that is not a JSON object of at most "
        "1 KiB (compact UTF-8 JSON) nested at most 8 deep, with finite numbers and valid "
        "Unicode text; nothing was written on any board.",
        ErrorCode.SCORE_OUT_OF_RANGE: "A score the board cannot take: a negative one, one over "
        "the largest score of the board's scoreWidth, or one below the board's minScore or above "
        "its maxScore (the message names the bounds; on an INCREMENT board they bound each "
        "play's amount, and the width the total); or a play that would take the player's "
        f"lifetimeScore past {MAX_LIFETIME_SCORE} or gamesPlayed past {MAX_GAMES_PLAYED}. "
        "Nothing was written on any board.",
        ErrorCode.PLAYER_NOT_FOUND: "A write names an unknown player (a player being erased is "
        "unknown to plays).",
        ErrorCode.PLAYER_EXISTS: "A player with this id exists.",
        ErrorCode.PLAYER_BANNED: "The player is banned: its plays are refused and nothing is "
        "written.",
        ErrorCode.PLAYER_NOT_BANNED: "unbanPlayer names a player that is not banned.",
        ErrorCode.EMAIL_TAKEN: "Another player has this e-mail address.",
        ErrorCode.LEADERBOARD_NOT_FOUND: "A write or subscription names an unknown board.",
        ErrorCode.LEADERBOARD_EXISTS: "A board or family with this id exists, or holds one of "
        "the family's board ids.",
        ErrorCode.NO_REWARD: "claimReward of a player with no final result on the board "
        "(the board is not FINAL, the player had no entry, or was erased), or with a result in "
        "no reward tier: nothing was written.",
        ErrorCode.ALREADY_CLAIMED: "claimReward of a result whose reward was claimed before: "
        "the payload's claim is that first claim, with its claimedAt; nothing was written. The "
        "game grants the reward's items on the first claim's success alone.",
        ErrorCode.ENTRY_NOT_FOUND: "The player has no entry on the board to remove; or a rank "
        "read from the rank index is of an entry removed a moment ago (ask again).",
        ErrorCode.LEADERBOARD_CLOSED: "A play before the board's startsAt, from its endsAt on, "
        "or on a board whose close has begun (status CLOSING or FINAL); or a removeEntry on "
        "such a board, whose standings are frozen.",
        ErrorCode.SUBMISSION_CONFLICT: "A write lost its race with concurrent writes of the same "
        f"items on every try: a play {play_writes.MAX_ATTEMPTS} times in a row (nothing was "
        f"written), a removeEntry {removals.MAX_ATTEMPTS} times (nothing was removed), or a ban "
        "or an erasure whose player's items kept changing (it is in force, and goes on where it "
        "stopped when sent again): retry.",
        ErrorCode.SUBMISSION_ID_REUSED: "A submissionId already recorded for a different play.",
        ErrorCode.BACKEND_UNAVAILABLE: "The database is down, overloaded or too slow for the "
        "request's time; nothing was written: retry later.",
        ErrorCode.OUTCOME_UNKNOWN: "A write may have been applied without the database "
        "confirming it: send the play again with the same submissionId.",
        ErrorCode.UNAUTHENTICATED: "A write or private read without a valid API key.",
        ErrorCode.FORBIDDEN: "The key presented does not allow this: moderation needs an "
        "admin key.",
        ErrorCode.COST_LIMIT_EXCEEDED: "A document whose worst-case cost is over the limit, or "
        "an operation that reached its cap of database calls: ask for less.",
        ErrorCode.THROTTLED: "This client is over its allowance (cost points, sockets, "
        "operations on a socket): retry after extensions.retryAfter seconds (over HTTP, the "
        "status is 429 with a Retry-After header).",
        ErrorCode.SERVICE_OVERLOADED: "The service is at capacity; nothing was done: retry "
        "shortly (over HTTP, the status is 503 with a Retry-After header).",
        ErrorCode.BAD_USER_INPUT: "Variables that do not fit their declared types.",
        ErrorCode.GRAPHQL_VALIDATION_FAILED: "A document that does not parse or is not valid.",
        ErrorCode.CHARACTER_LIMIT_EXCEEDED: "A document longer than extensions.limit characters "
        "(variables not counted).",
        ErrorCode.TOKEN_LIMIT_EXCEEDED: "A document of more than extensions.limit lexical tokens.",
        ErrorCode.DEPTH_LIMIT_EXCEEDED: "An operation nesting fields with selections deeper "
        "than extensions.limit, counted through fragments.",
        ErrorCode.ALIAS_LIMIT_EXCEEDED: "A document of more than extensions.limit aliased "
        "fields, each expansion of a fragment counted.",
        ErrorCode.OPERATION_LIMIT_EXCEEDED: "A document of more than extensions.limit operations.",
        ErrorCode.FRAGMENT_LIMIT_EXCEEDED: "A document defining more than extensions.limit "
        "fragments.",
        ErrorCode.SPREAD_LIMIT_EXCEEDED: "A selection set spreading more than extensions.limit "
        "fragments.",
        ErrorCode.SAME_NAME_LIMIT_EXCEEDED: "A selection set with more than extensions.limit "
        "fields of one response name (the alias, else the name), its fragments' included.",
        ErrorCode.MERGE_LIMIT_EXCEEDED: "A document whose fields of one response name take more "
        "than extensions.limit units of work to check for merging: fields with selections "
        "repeated inside repeated fields multiply it.",
        ErrorCode.INTERNAL_SERVER_ERROR: "Anything unexpected: the client gets this code and no "
        "detail; extensions.requestId names it in the service's log, which has the traceback.",
    },
)

_register(
    ModerationAction,
    "ModerationActionKind",
    "What an operator did.",
    {
        ModerationAction.REMOVE_ENTRY: "Took a player's entry off a board (removeEntry).",
        ModerationAction.BAN_PLAYER: "Banned a player and took its entries off every board "
        "(banPlayer).",
        ModerationAction.UNBAN_PLAYER: "Lifted a player's ban (unbanPlayer).",
        ModerationAction.ERASE_PLAYER: "Erased a player's data (erasePlayer); the record does "
        "not name the player.",
    },
)
