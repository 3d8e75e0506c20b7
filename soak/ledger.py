"""What the soak's clients were told about their submissions, checked against the table.

Every acknowledged play must be in the table as acknowledged, unless its player was erased
(then nothing of the player may be left anywhere in the table); every submission refused with
a typed error must have written nothing; plays sent again with the same ``submissionId`` must
all be answered with one session, only one of them as the first (``duplicate: false``).

The ledger also knows the moderation the clients did (removals, bans, erasures), so that a
read may tell an entry a moderator took away from one that was lost.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from soak.invariants import Snapshot, Violation

__all__ = ["Ack", "Ledger", "LedgerKind", "Play"]


class LedgerKind(StrEnum):
    """What kind of client-visible promise a finding breaks."""

    LOST_ACK = "lost-ack"
    """An acknowledged play has no session in the table."""
    ACK_MISMATCH = "ack-mismatch"
    """An acknowledgement, or the session it names, differs from the play sent."""
    IDEMPOTENCY = "idempotency"
    """Sends of one submissionId answered with different sessions, or several as the first."""
    REFUSED_WRITTEN = "refused-written"
    """A submission refused with a typed error left a session or a record behind."""
    PHANTOM_SESSIONS = "phantom-sessions"
    """More sessions than acknowledged plays plus plays whose outcome is unknown."""
    WRONG_ANSWER = "wrong-answer"
    """A request answered something other than what was asked (see the message)."""
    ERASED_REMAINS = "erased-remains"
    """An item of the table still holds an erased player's id or e-mail address."""


@dataclass(frozen=True)
class Play:
    """One submission as a client sends it."""

    player_id: str
    game_id: str
    score: int
    leaderboard_ids: tuple[str, ...]
    family_ids: tuple[str, ...] = ()
    duration_sec: int | None = None
    submission_id: str | None = None

    def variables(self) -> dict[str, Any]:
        """The ``SubmitScoreInput`` of this play."""
        given: dict[str, Any] = {
            "playerId": self.player_id,
            "gameId": self.game_id,
            "score": self.score,
            "leaderboardIds": list(self.leaderboard_ids),
            "familyIds": list(self.family_ids),
            "durationSec": self.duration_sec,
            "submissionId": self.submission_id,
        }
        return {k: v for k, v in given.items() if v is not None}


@dataclass(frozen=True)
class Ack:
    """A play the service acknowledged, with what it answered."""

    play: Play
    session_id: str
    session: dict[str, Any]
    """The ``session`` of the payload."""
    entry_boards: tuple[str, ...]
    """The ``leaderboardId`` of each of the payload's ``entries``."""
    duplicate: bool
    sent_at: float = 0.0
    """When the play was sent (``time.monotonic()``)."""


ANY_BOARD = "*"
"""The board of a moderation that touches every entry of a player (a ban, an erasure)."""

Pair = tuple[str, str]
"""(playerId, leaderboardId, or ANY_BOARD)."""


@dataclass
class Ledger:
    """Every submission outcome the clients saw."""

    acks: list[Ack] = field(default_factory=list)
    refused: list[tuple[Play, str]] = field(default_factory=list)
    """Submissions refused with an expected typed error, and its code."""
    unknown: int = 0
    """Submissions whose outcome is unknown (transport failure, 5xx, unexpected error): each
    may or may not have been recorded."""
    anomalies: list[Violation] = field(default_factory=list)
    """Wrong answers noticed while running (a read or an acknowledgement that cannot be)."""
    erasing: dict[str, str] = field(default_factory=dict)
    """Players whose erasure was sent, and their e-mail addresses."""
    erased: set[str] = field(default_factory=set)
    """Players whose erasure was answered complete."""
    _sessions: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _entered: dict[Pair, float] = field(default_factory=dict)
    """When the latest acknowledged play on a (player, board) was sent."""
    _moderating: Counter[Pair] = field(default_factory=Counter)
    """Moderation requests under way, per (player, board) or (player, ANY_BOARD)."""
    _moderated: dict[Pair, float] = field(default_factory=dict)
    """When the latest moderation of a (player, board) or (player, ANY_BOARD) was answered."""
    _epochs: Counter[Pair] = field(default_factory=Counter)
    """How many moderation requests were sent, per (player, board) or (player, ANY_BOARD)."""

    def acknowledge(self, ack: Ack) -> None:
        self.acks.append(ack)
        player = ack.play.player_id
        self._sessions[player].add(ack.session_id)
        if ack.duplicate:
            return  # recorded by an earlier send, at a time this answer does not tell
        for board in ack.session.get("leaderboardIds") or ():
            pair = (player, str(board))
            self._entered[pair] = max(ack.sent_at, self._entered.get(pair, ack.sent_at))

    def acknowledged_sessions(self, player_id: str) -> int:
        """How many distinct sessions were acknowledged so far to ``player_id``'s plays."""
        return len(self._sessions.get(player_id, ()))

    def moderation_sent(self, player_id: str, board_id: str = ANY_BOARD) -> None:
        """A moderation of the player's entry on ``board_id`` (every board: ANY_BOARD) is
        under way."""
        pair = (player_id, board_id)
        self._moderating[pair] += 1
        self._epochs[pair] += 1

    def moderation_answered(self, player_id: str, board_id: str = ANY_BOARD) -> None:
        """The moderation sent with :meth:`moderation_sent` was answered (whatever it did)."""
        pair = (player_id, board_id)
        self._moderating[pair] -= 1
        self._moderated[pair] = time.monotonic()

    def moderated(self, player_id: str) -> bool:
        """Whether any moderation of the player (of one entry or of all) was sent."""
        return any(p == player_id for p, _ in self._epochs)

    def entry_expected(self, player_id: str, board_id: str) -> int | None:
        """Whether the player must have an entry on the board now: a play of it there was
        acknowledged, sent after every moderation of that entry was answered, and none is
        under way. Then the moderation epoch to give :meth:`still_expected` once the read is
        answered; else None."""
        entered = self._entered.get((player_id, board_id))
        if entered is None or player_id in self.erasing:
            return None
        keys = ((player_id, board_id), (player_id, ANY_BOARD))
        if any(self._moderating[k] for k in keys):
            return None
        if any(entered <= self._moderated.get(k, float("-inf")) for k in keys):
            return None
        return self._epoch(player_id, board_id)

    def still_expected(self, player_id: str, board_id: str, epoch: int) -> bool:
        """Whether no moderation of the entry was sent since :meth:`entry_expected` answered
        ``epoch``."""
        return self._epoch(player_id, board_id) == epoch

    def _epoch(self, player_id: str, board_id: str) -> int:
        return self._epochs[(player_id, board_id)] + self._epochs[(player_id, ANY_BOARD)]

    def anomaly(self, subject: str, message: str) -> None:
        self.anomalies.append(Violation(LedgerKind.WRONG_ANSWER, subject, message))

    def check(self, snap: Snapshot, items: Iterable[Mapping[str, Any]] = ()) -> list[Violation]:
        """Every broken promise, given the table's final content (``items``: its raw items,
        searched for what erased players left behind)."""
        found = list(self.anomalies)
        found += self._check_acks(snap)
        found += self._check_idempotency()
        found += self._check_refused(snap)
        found += self._check_count(snap)
        found += self._check_erased(items)
        return sorted(found)

    def _check_acks(self, snap: Snapshot) -> list[Violation]:
        found: list[Violation] = []
        for ack in self.acks:
            play = ack.play
            subject = f"session {play.player_id}/{ack.session_id}"
            session = snap.sessions.get((play.player_id, ack.session_id))
            if session is None:
                if play.player_id not in self.erasing:
                    found.append(
                        Violation(LedgerKind.LOST_ACK, subject, "acknowledged, not stored")
                    )
                continue
            boards = tuple(session.leaderboard_ids)
            named, families = (
                boards[: len(play.leaderboard_ids)],
                boards[len(play.leaderboard_ids) :],
            )
            problems = [
                what
                for what, wrong in (
                    (f"score {session.score} != {play.score}", session.score != play.score),
                    (f"game {session.game_id} != {play.game_id}", session.game_id != play.game_id),
                    (
                        f"boards {list(boards)} for {play.leaderboard_ids} + {play.family_ids}",
                        named != play.leaderboard_ids
                        or len(families) != len(play.family_ids)
                        or any(
                            not b.startswith(f + ".")
                            for b, f in zip(families, play.family_ids, strict=False)
                        ),
                    ),
                    (
                        f"submissionId {session.submission_id} != {play.submission_id}",
                        session.submission_id != play.submission_id,
                    ),
                    (
                        f"answered boards {list(ack.entry_boards)}, stored {list(boards)}",
                        ack.entry_boards != boards,
                    ),
                    (
                        f"answered leaderboardIds {ack.session.get('leaderboardIds')}",
                        ack.session.get("leaderboardIds") != list(boards),
                    ),
                    (
                        f"answered score {ack.session.get('score')}",
                        ack.session.get("score") != session.score,
                    ),
                )
                if wrong
            ]
            if problems:
                found.append(Violation(LedgerKind.ACK_MISMATCH, subject, "; ".join(problems)))
        return found

    def _check_idempotency(self) -> list[Violation]:
        by_id: defaultdict[tuple[str, str], list[Ack]] = defaultdict(list)
        for ack in self.acks:
            if ack.play.submission_id is not None:
                by_id[(ack.play.player_id, ack.play.submission_id)].append(ack)
        found: list[Violation] = []
        for (player_id, submission_id), acks in by_id.items():
            subject = f"submission {player_id}/{submission_id}"
            sessions = sorted({a.session_id for a in acks})
            if len(sessions) > 1:
                found.append(
                    Violation(
                        LedgerKind.IDEMPOTENCY,
                        subject,
                        f"{len(acks)} sends answered with {len(sessions)} sessions: {sessions}",
                    )
                )
            firsts = sum(1 for a in acks if not a.duplicate)
            if firsts > 1:
                found.append(
                    Violation(
                        LedgerKind.IDEMPOTENCY,
                        subject,
                        f"{firsts} of {len(acks)} sends answered duplicate: false",
                    )
                )
        return found

    def _check_refused(self, snap: Snapshot) -> list[Violation]:
        found: list[Violation] = []
        acked_ids = {
            (a.play.player_id, a.play.submission_id) for a in self.acks if a.play.submission_id
        }
        by_id: defaultdict[tuple[str, str | None], list[str]] = defaultdict(list)
        for s in snap.sessions.values():
            by_id[(s.player_id, s.submission_id)].append(s.session_id)
        for play, code in self.refused:
            if play.submission_id is None:
                continue
            key = (play.player_id, play.submission_id)
            if key in acked_ids:
                continue  # a reuse of an acknowledged id: its first play is recorded
            stored = by_id.get(key, [])
            if stored or key in snap.records:
                found.append(
                    Violation(
                        LedgerKind.REFUSED_WRITTEN,
                        f"submission {key[0]}/{key[1]}",
                        f"refused with {code}, yet stored: sessions {stored},"
                        f" record {key in snap.records}",
                    )
                )
        return found

    def _check_count(self, snap: Snapshot) -> list[Violation]:
        acked = {(a.play.player_id, a.session_id) for a in self.acks}
        extra = len(set(snap.sessions) - acked)
        if extra > self.unknown:
            return [
                Violation(
                    LedgerKind.PHANTOM_SESSIONS,
                    "table",
                    f"{extra} sessions were never acknowledged, but only {self.unknown}"
                    " submissions had an unknown outcome",
                )
            ]
        return []

    def _check_erased(self, items: Iterable[Mapping[str, Any]]) -> list[Violation]:
        """No item holds the id or the e-mail address of a player whose erasure completed."""
        names = sorted({n for p in self.erased for n in (p, self.erasing.get(p, "")) if n}, key=len)
        if not names:
            return []
        pattern = re.compile(
            "(?<![A-Za-z0-9_.@-])("
            + "|".join(re.escape(n) for n in reversed(names))
            + ")(?![A-Za-z0-9_.@-])",
            re.IGNORECASE,
        )
        found: list[Violation] = []
        for item in items:
            match = pattern.search(json.dumps(item, default=str))
            if match:
                found.append(
                    Violation(
                        LedgerKind.ERASED_REMAINS,
                        f"item {item.get('pk')!r} / {item.get('sk')!r}",
                        f"holds {match.group(1)!r}, erased",
                    )
                )
        return found
