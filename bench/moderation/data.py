"""The tables the moderation benchmark acts on, item for item, written with BatchWriteItem.

For a ban: the banned player with one play entering N boards (an entry on each) and a second
player with the same on every board. For an erasure: the erased player with M sessions spread
over :data:`ERASURE_BOARDS` boards, its best entry on each, and play records for its last
:data:`PLAY_RECORDS` plays; and a second player with an entry on every board. Every item is
what the submission path leaves in the table (see :mod:`bench.core.items`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bench.core.items import (
    claim_item,
    guard_item,
    play_items,
    player_item,
    score_item,
    session_item,
)
from bench.core.workload import new_player
from dynamo.ids import new_session_id
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem, Period
from dynamo.play_records import (
    IDEMPOTENCY_WINDOW,
    PLAY_RECORD,
    PlayRecord,
    RecordedEntry,
    fingerprint,
)
from dynamo.plays import Play
from dynamo.scores import ScoreItem
from dynamo.sessions import SessionItem

__all__ = [
    "BANNED_ID",
    "ERASED_ID",
    "ERASURE_BOARDS",
    "OTHER_ID",
    "PLAY_RECORDS",
    "BanTable",
    "ErasureTable",
    "ban_table",
    "board_ids",
    "erasure_table",
]

BANNED_ID = "banned-player"
"""The player the ban removes from every board."""
ERASED_ID = "erased-player"
"""The player erased: an id that no other item holds, so that a scan can look for it."""
OTHER_ID = "other-player"
"""The second player on every board, whose entries stay."""
ERASURE_BOARDS = 50
"""The boards the erased player's sessions are spread over (an entry on each)."""
PLAY_RECORDS = 10
"""The erased player's last plays that carried a submission id (a play record each)."""
GAME = "arena"


@dataclass(frozen=True)
class BanTable:
    """The items of a ban's table and what the ban is expected to remove."""

    items: list[dict[str, Any]]
    player_id: str
    boards: list[str]


@dataclass(frozen=True)
class ErasureTable:
    """The items of an erasure's table and what the erasure is expected to delete."""

    items: list[dict[str, Any]]
    player_id: str
    boards: list[str]
    sessions: int
    play_records: int

    @property
    def player_items(self) -> int:
        """Every item that names the player: its partition (the Player item, sessions, play
        records, entry guards), its e-mail claim and its Score items."""
        return 2 + self.sessions + self.play_records + 2 * len(self.boards)


def board_ids(count: int) -> list[str]:
    """The ids of ``count`` boards, in order."""
    return [f"mod-board-{n:04d}" for n in range(count)]


def _boards(ids: list[str], at: datetime, entries: int) -> list[LeaderboardItem]:
    return [
        LeaderboardItem(
            leaderboard_id=b,
            name=f"Moderation board {b}",
            period=Period.GLOBAL,
            created_at=at,
            entry_count=entries,
        )
        for b in ids
    ]


def _one_play_on(
    boards: list[LeaderboardItem], player_id: str, score: int, at: datetime
) -> list[dict[str, Any]]:
    """A new player whose first play entered every board of ``boards``."""
    play = Play(
        player_id=player_id,
        game_id=GAME,
        score=score,
        leaderboard_ids=tuple(b.leaderboard_id for b in boards),
        duration_sec=120,
    )
    return play_items(boards, play, at, new_session_id())


def ban_table(boards: int, at: datetime) -> BanTable:
    """The banned player and the second player, each with an entry on ``boards`` boards."""
    ids = board_ids(boards)
    loaded = _boards(ids, at, entries=2)
    items = [LEADERBOARD.item(b) for b in loaded]
    items += _one_play_on(loaded, BANNED_ID, 90, at)
    items += _one_play_on(loaded, OTHER_ID, 80, at)
    return BanTable(items=items, player_id=BANNED_ID, boards=ids)


def _sessions(count: int, ids: list[str], at: datetime, recorded: int) -> list[SessionItem]:
    """``count`` plays of the erased player, a second apart up to ``at``, round the boards;
    the last ``recorded`` carry a submission id."""
    return [
        SessionItem(
            session_id=new_session_id(),
            player_id=ERASED_ID,
            game_id=GAME,
            score=n % 1000,
            duration_sec=60,
            played_at=at - timedelta(seconds=count - n),
            leaderboard_id=ids[n % len(ids)],
            leaderboard_ids=[ids[n % len(ids)]],
            submission_id=new_session_id() if n >= count - recorded else None,
        )
        for n in range(count)
    ]


def _best_entries(sessions: list[SessionItem]) -> dict[str, ScoreItem]:
    """Each board's entry: the best of the sessions on it (the first, among equal scores)."""
    best: dict[str, SessionItem] = {}
    for s in sessions:
        assert s.leaderboard_id is not None
        if s.leaderboard_id not in best or s.score > best[s.leaderboard_id].score:
            best[s.leaderboard_id] = s
    return {
        b: ScoreItem(
            leaderboard_id=b,
            player_id=s.player_id,
            score=s.score,
            attained_at=s.played_at,
            session_id=s.session_id,
            version=1,
        )
        for b, s in best.items()
    }


def _record(session: SessionItem, entry: ScoreItem) -> PlayRecord:
    """The play record of a session that carried a submission id."""
    assert session.submission_id is not None
    assert session.leaderboard_id is not None
    play = Play(
        player_id=session.player_id,
        game_id=session.game_id,
        score=session.score,
        leaderboard_ids=(session.leaderboard_id,),
        duration_sec=session.duration_sec,
        submission_id=session.submission_id,
    )
    return PlayRecord(
        player_id=session.player_id,
        submission_id=session.submission_id,
        fingerprint=fingerprint(play),
        session_id=session.session_id,
        played_at=session.played_at,
        entries=[
            RecordedEntry(
                leaderboard_id=entry.leaderboard_id,
                score=entry.score,
                attained_at=entry.attained_at,
                session_id=entry.session_id,
                improved=entry.session_id == session.session_id,
            )
        ],
        ttl=int((session.played_at + IDEMPOTENCY_WINDOW).timestamp()),
    )


def erasure_table(
    sessions: int,
    at: datetime,
    *,
    boards: int = ERASURE_BOARDS,
    play_records: int = PLAY_RECORDS,
) -> ErasureTable:
    """The erased player with ``sessions`` sessions over ``boards`` boards (at least one
    session per board), its last ``play_records`` plays recorded, and the second player."""
    if sessions < boards or play_records > sessions:
        raise ValueError(
            f"{sessions} sessions cannot cover {boards} boards and {play_records} records"
        )
    ids = board_ids(boards)
    loaded = _boards(ids, at, entries=2)
    by_id = {b.leaderboard_id: b for b in loaded}
    played = _sessions(sessions, ids, at, play_records)
    entries = _best_entries(played)
    player = new_player(ERASED_ID, at - timedelta(days=1)).model_copy(
        update={"lifetime_score": sum(s.score for s in played), "games_played": sessions}
    )
    items = [LEADERBOARD.item(b) for b in loaded]
    items += [player_item(player), claim_item(player)]
    items += [session_item(s) for s in played]
    for board_id, best in entries.items():
        entry = best.model_copy(update={"player_name": player.name})
        items += [guard_item(by_id[board_id], entry), score_item(by_id[board_id], entry)]
    for s in played[sessions - play_records :]:
        assert s.leaderboard_id is not None
        items.append(PLAY_RECORD.item(_record(s, entries[s.leaderboard_id])))
    items += _one_play_on(loaded, OTHER_ID, 80, at)
    return ErasureTable(
        items=items,
        player_id=ERASED_ID,
        boards=ids,
        sessions=sessions,
        play_records=play_records,
    )
