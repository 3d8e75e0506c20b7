"""The player's part of a play: whether it may play, and the transaction item that adds the
play to its sums (``lifetimeScore``, ``gamesPlayed``) on condition that it still may."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import serialize, stamp
from dynamo.players import MAX_GAMES_PLAYED, MAX_LIFETIME_SCORE, PLAYABLE, PLAYER, PlayerItem
from dynamo.plays import Play

__all__ = ["check_playable", "check_totals", "count_play", "no_player", "totals_out_of_range"]


def check_playable(player: PlayerItem, play: Play) -> None:
    """Refuse the plays of a banned player, and of one being erased (as a missing one's)."""
    if player.erasing_since is not None:
        raise no_player(play)
    if player.banned:
        raise LeaderboardError(
            ErrorCode.PLAYER_BANNED,
            f"player {play.player_id!r} is banned; nothing was recorded",
            Subject.PLAYER,
        )


def no_player(play: Play) -> LeaderboardError:
    """A play of an unknown player (or one being erased): PLAYER_NOT_FOUND."""
    return LeaderboardError(
        ErrorCode.PLAYER_NOT_FOUND, f"no player {play.player_id!r}", Subject.PLAYER
    )


def check_totals(player: PlayerItem, play: Play) -> None:
    """Refuse a play that would take the player's sums past what their types carry."""
    if player.lifetime_score + play.score > MAX_LIFETIME_SCORE:
        raise totals_out_of_range(play)
    if player.games_played + 1 > MAX_GAMES_PLAYED:
        raise totals_out_of_range(play)


def totals_out_of_range(play: Play) -> LeaderboardError:
    """A play that would take the player's sums past their types: SCORE_OUT_OF_RANGE."""
    return LeaderboardError(
        ErrorCode.SCORE_OUT_OF_RANGE,
        f"this play would take player {play.player_id!r} past the largest lifetimeScore "
        f"({MAX_LIFETIME_SCORE}) or gamesPlayed ({MAX_GAMES_PLAYED}); nothing was recorded",
        Subject.SCORE,
    )


def count_play(
    table: str, play: Play, at: datetime, name_version: int | None = None
) -> dict[str, Any]:
    """Add the play to the player's sums, on condition that the player may play (not banned,
    not being erased), that the sums stay within their types, and that the player's name is
    still the one read (``name_version``, its ``nameVersion``; the play writes it into its
    entries): a play racing a ban, a rename or another play is thus refused by the
    transaction itself. On a failed condition the transaction returns the player's item,
    which tells which condition failed."""
    renamed = (
        "attribute_not_exists(nameVersion)" if name_version is None else "nameVersion = :names"
    )
    values: dict[str, Any] = {
        ":now": stamp(at),
        ":score": play.score,
        ":one": 1,
        ":room": MAX_LIFETIME_SCORE - play.score,
        ":games": MAX_GAMES_PLAYED - 1,
    }
    if name_version is not None:
        values[":names"] = name_version
    return {
        "Update": {
            "TableName": table,
            "Key": serialize(PLAYER.key_attributes(player_id=play.player_id)),
            "UpdateExpression": "SET updatedAt = :now ADD lifetimeScore :score, gamesPlayed :one",
            "ConditionExpression": f"attribute_exists(pk) AND {PLAYABLE}"
            " AND (attribute_not_exists(lifetimeScore) OR lifetimeScore <= :room)"
            f" AND (attribute_not_exists(gamesPlayed) OR gamesPlayed <= :games) AND {renamed}",
            "ExpressionAttributeValues": serialize(values),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }
