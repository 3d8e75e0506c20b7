"""Play records: what makes a client-identified play idempotent.

Written with ``attribute_not_exists`` in the same transaction as the play it records, it holds
a fingerprint of the submission's content and the result the play produced. A repeat of the
play finds it and gets that result back; a different play under the same id is
refused. Records expire (``ttl``) after the idempotency window.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.items import Item
from dynamo.keys import Entity
from dynamo.metadata import Metadata
from dynamo.plays import BoardResult, Play, PlayResult, play_session
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem

if TYPE_CHECKING:
    from dynamo.entry_writes import EntryChange

__all__ = [
    "IDEMPOTENCY_WINDOW",
    "PLAY_RECORD",
    "PlayRecord",
    "RecordedEntry",
    "fingerprint",
    "record_of",
    "replay",
]

PLAY_RECORD = Entity.declare(
    "Play record", pk="PLAYER#{player_id}", sk="SUBMISSION#{submission_id}"
)

IDEMPOTENCY_WINDOW = timedelta(days=7)


class RecordedEntry(Item):
    leaderboard_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None
    improved: bool
    metadata: Metadata | None = None
    """The entry's metadata (the play's, or the standing entry's when the play left it)."""

    def entry(self, player_id: str) -> ScoreItem:
        """The player's entry on the board as the play left it."""
        return ScoreItem(
            leaderboard_id=self.leaderboard_id,
            player_id=player_id,
            score=self.score,
            attained_at=self.attained_at,
            session_id=self.session_id,
            metadata=self.metadata,
        )


class PlayRecord(Item):
    player_id: str
    submission_id: str
    fingerprint: str
    session_id: str
    played_at: datetime
    entries: list[RecordedEntry]
    ttl: int


def fingerprint(play: Play) -> str:
    """A digest of everything a play says, to tell a repeat from a reuse of its id (the same
    metadata in another key order is the same play)."""
    content: dict[str, Any] = {
        "playerId": play.player_id,
        "gameId": play.game_id,
        "score": play.score,
        "durationSec": play.duration_sec,
        "leaderboardIds": list(play.leaderboard_ids),
        "familyIds": list(play.family_ids),
    }
    if play.metadata is not None:
        # Only when given, so that a play without metadata keeps the digest it always had.
        content["metadata"] = play.metadata
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def record_of(
    play: Play, digest: str, session: SessionItem, changes: list[EntryChange]
) -> PlayRecord:
    assert play.submission_id is not None
    return PlayRecord(
        player_id=play.player_id,
        submission_id=play.submission_id,
        fingerprint=digest,
        session_id=session.session_id,
        played_at=session.played_at,
        entries=[
            RecordedEntry(
                leaderboard_id=c.board.leaderboard_id,
                score=c.entry.score,
                attained_at=c.entry.attained_at,
                session_id=c.entry.session_id,
                improved=c.changed,
                metadata=c.entry.metadata,
            )
            for c in changes
        ],
        ttl=int((session.played_at + IDEMPOTENCY_WINDOW).timestamp()),
    )


def replay(record: PlayRecord, play: Play, digest: str) -> PlayResult:
    """The result of the recorded play, for a repeat of it."""
    if record.fingerprint != digest:
        raise LeaderboardError(
            ErrorCode.SUBMISSION_ID_REUSED,
            "this submissionId was already used for a different submission",
            Subject.SUBMISSION,
        )
    session = play_session(
        play, record.session_id, record.played_at, [e.leaderboard_id for e in record.entries]
    )
    return PlayResult(
        session=session,
        boards=[
            BoardResult(
                leaderboard_id=e.leaderboard_id,
                entry=e.entry(play.player_id),
                improved=e.improved,
                board=None,
            )
            for e in record.entries
        ],
        duplicate=True,
    )
