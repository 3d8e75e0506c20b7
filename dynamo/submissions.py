"""Submission records: what makes a client-identified submission idempotent.

Written with ``attribute_not_exists`` in the same transaction as the play it records, it holds
a fingerprint of the submission's content and the result the play produced. A repeat of the
submission finds it and gets that result back; a different submission under the same id is
refused. Records expire (``ttl``) after the idempotency window.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from dynamo.errors import ErrorCode, LeaderboardError, Subject
from dynamo.keys import Entity
from dynamo.plays import BoardResult, Submission, SubmitResult, play_session
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem
from dynamo.table import Item

if TYPE_CHECKING:
    from dynamo.entry_writes import EntryChange

__all__ = [
    "IDEMPOTENCY_WINDOW",
    "SUBMISSION",
    "RecordedEntry",
    "SubmissionRecord",
    "fingerprint",
    "record_of",
    "replay",
]

SUBMISSION = Entity.declare(
    "Submission record", pk="PLAYER#{player_id}", sk="SUBMISSION#{submission_id}"
)

IDEMPOTENCY_WINDOW = timedelta(days=7)


class RecordedEntry(Item):
    leaderboard_id: str
    score: int
    attained_at: datetime
    session_id: str | None = None
    improved: bool

    def entry(self, player_id: str) -> ScoreItem:
        """The player's entry on the board as the play left it."""
        return ScoreItem(
            leaderboard_id=self.leaderboard_id,
            player_id=player_id,
            score=self.score,
            attained_at=self.attained_at,
            session_id=self.session_id,
        )


class SubmissionRecord(Item):
    player_id: str
    submission_id: str
    fingerprint: str
    session_id: str
    played_at: datetime
    entries: list[RecordedEntry]
    ttl: int


def fingerprint(sub: Submission) -> str:
    """A digest of everything a submission says, to tell a repeat from a reuse of its id."""
    content = {
        "playerId": sub.player_id,
        "gameId": sub.game_id,
        "score": sub.score,
        "durationSec": sub.duration_sec,
        "leaderboardIds": list(sub.leaderboard_ids),
        "familyIds": list(sub.family_ids),
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def record_of(
    sub: Submission, digest: str, session: SessionItem, changes: list[EntryChange]
) -> SubmissionRecord:
    assert sub.submission_id is not None
    return SubmissionRecord(
        player_id=sub.player_id,
        submission_id=sub.submission_id,
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
            )
            for c in changes
        ],
        ttl=int((session.played_at + IDEMPOTENCY_WINDOW).timestamp()),
    )


def replay(record: SubmissionRecord, sub: Submission, digest: str) -> SubmitResult:
    """The result of the recorded submission, for a repeat of it."""
    if record.fingerprint != digest:
        raise LeaderboardError(
            ErrorCode.SUBMISSION_ID_REUSED,
            "this submissionId was already used for a different submission",
            Subject.SUBMISSION,
        )
    session = play_session(
        sub, record.session_id, record.played_at, [e.leaderboard_id for e in record.entries]
    )
    return SubmitResult(
        session=session,
        boards=[
            BoardResult(
                leaderboard_id=e.leaderboard_id,
                entry=e.entry(sub.player_id),
                improved=e.improved,
                board=None,
            )
            for e in record.entries
        ],
        duplicate=True,
    )
