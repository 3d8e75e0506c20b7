"""The operation catalogue: every benchmarked access pattern as a GraphQL document, how its
variables are picked, its raw aioboto3 counterpart and a check of the response.

Besides one operation per access pattern, two pages as a frontend sends them, with the exact
documents of ``examples/operations/``: ``LeaderboardPage`` (the top 100 with names and ranks)
and ``PlayerProfile`` (a player's rank on three boards, best score and last ten sessions). The
top 100 and the leaderboard page are measured again on a write-sharded board of
:data:`SHARDED_PARTITIONS` partitions holding the same players and scores as the main board
(:func:`sharded_board`).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.access_patterns.raw_calls import RawCalls
from bench.core.documents import example_operation
from bench.core.report import TOP100_OPERATION
from bench.core.workload import GAMES, PROFILE_BOARDS, TOP_N, LoadedPlayer, Variables
from dynamo.db import Db
from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, Period

__all__ = [
    "SHARDED_ID",
    "SHARDED_PAGE_OPERATION",
    "SHARDED_PARTITIONS",
    "TOP100_SHARDED_OPERATION",
    "Operation",
    "operations",
    "sharded_board",
]

SHARDED_ID = "bench-sharded"
SHARDED_PARTITIONS = 8
"""The partitions of the write-sharded board, whose pages are measured beside the main
board's."""
TOP100_SHARDED_OPERATION = f"top 100 with player names, {SHARDED_PARTITIONS} partitions"
SHARDED_PAGE_OPERATION = (
    f"leaderboard page (LeaderboardPage, first 100), {SHARDED_PARTITIONS} partitions"
)


def sharded_board() -> LeaderboardItem:
    """The write-sharded board: a global board of :data:`SHARDED_PARTITIONS` partitions, on
    which every player of the main board also plays (its play enters both)."""
    return LeaderboardItem(
        leaderboard_id=SHARDED_ID,
        name="Benchmark board, write-sharded",
        period=Period.GLOBAL,
        partitions=SHARDED_PARTITIONS,
        created_at=now(),
    )


@dataclass(frozen=True)
class Operation:
    """One access pattern: its GraphQL document, how to pick variables, the raw equivalent,
    and a check that a response carries what was asked for."""

    name: str
    query: str
    pick: Callable[[random.Random], Variables]
    raw: Callable[[Variables], Awaitable[None]]
    check: Callable[[Any], bool]


def _edges(connection: Any) -> list[Any]:
    edges: list[Any] = connection["edges"]
    return edges


def _top100(name: str, board_id: str, raw: RawCalls, entries: int) -> Operation:
    return Operation(
        name,
        "query($id: ID!) { leaderboard(id: $id) { topScores(first: 100) {"
        " edges { node { score player { name } } } } } }",
        lambda rng: {"id": board_id},
        raw.top_scores,
        lambda d: (
            len(_edges(d["leaderboard"]["topScores"])) == min(TOP_N, entries)
            and all(e["node"]["player"]["name"] for e in _edges(d["leaderboard"]["topScores"]))
        ),
    )


def _leaderboard_page(name: str, board_id: str, raw: RawCalls, entries: int) -> Operation:
    return Operation(
        name,
        example_operation("LeaderboardPage"),
        lambda rng: {"leaderboardId": board_id, "first": TOP_N},
        raw.leaderboard_page,
        lambda d: (
            len(_edges(d["leaderboard"]["topScores"])) == min(TOP_N, entries)
            and all(
                e["node"]["player"]["name"] and e["node"]["rank"] >= 1
                for e in _edges(d["leaderboard"]["topScores"])
            )
        ),
    )


def operations(
    db: Db, boards: Sequence[LeaderboardItem], loaded: Sequence[LoadedPlayer], entries: int
) -> list[Operation]:
    """The benchmarked operations, reads first and the submission last. ``boards`` are the
    loaded boards, the main board first; the operations of the write-sharded board are
    measured when it is one of them."""
    raw = RawCalls(db, boards)
    board = boards[0]
    board_id = board.leaderboard_id
    sharded = (
        [
            _top100(TOP100_SHARDED_OPERATION, SHARDED_ID, raw, entries),
            _leaderboard_page(SHARDED_PAGE_OPERATION, SHARDED_ID, raw, entries),
        ]
        if SHARDED_ID in raw.boards
        else []
    )
    by_score = sorted(loaded, key=lambda p: p.score, reverse=True)
    # The middle tenth of the board: the COUNT Query of a rank reads about half the board.
    lo = int(len(by_score) * 0.45)
    mid = by_score[lo : max(int(len(by_score) * 0.55), lo + 1)]
    top = max(1, entries // 3)
    # Players on all three boards, for the profile page (every player when the boards were
    # loaded on the main board alone: their other ranks are null).
    on_all = [p for p in loaded if set(PROFILE_BOARDS) <= set(p.board_ids)] or list(loaded)

    def anyone(rng: random.Random) -> LoadedPlayer:
        return rng.choice(loaded)

    def session_of(rng: random.Random) -> Variables:
        player = anyone(rng)
        return {"playerId": player.player_id, "sessionId": player.session_id}

    return [
        _top100(TOP100_OPERATION, board_id, raw, entries),
        _leaderboard_page("leaderboard page (LeaderboardPage, first 100)", board_id, raw, entries),
        *sharded,
        Operation(
            "player by id",
            "query($id: ID!) { player(id: $id) { id name lifetimeScore gamesPlayed } }",
            lambda rng: {"id": anyone(rng).player_id},
            raw.player,
            lambda d: d["player"] is not None,
        ),
        Operation(
            "player by email",
            "query($email: String!) { playerByEmail(email: $email) { id name } }",
            lambda rng: {"email": anyone(rng).email},
            raw.player_by_email,
            lambda d: d["playerByEmail"] is not None,
        ),
        Operation(
            "best score",
            "query($id: ID!, $board: ID!) { player(id: $id) {"
            " bestScore(leaderboardId: $board) { score attainedAt } } }",
            lambda rng: {"id": anyone(rng).player_id, "board": board_id},
            raw.player_entry,
            lambda d: d["player"]["bestScore"] is not None,
        ),
        Operation(
            "player's scores",
            "query($id: ID!) { player(id: $id) { scores(first: 20) {"
            " edges { node { score attainedAt } } } } }",
            lambda rng: {"id": anyone(rng).player_id},
            raw.player_scores,
            lambda d: len(_edges(d["player"]["scores"])) >= 1,
        ),
        Operation(
            "player's sessions (first 10)",
            "query($id: ID!) { player(id: $id) { sessions(first: 10) {"
            " edges { node { id score playedAt } } } } }",
            lambda rng: {"id": anyone(rng).player_id},
            raw.player_sessions,
            lambda d: len(_edges(d["player"]["sessions"])) >= 1,
        ),
        Operation(
            "session by id",
            "query($playerId: ID!, $sessionId: ID!) {"
            " session(playerId: $playerId, sessionId: $sessionId) { id score playedAt } }",
            session_of,
            raw.session,
            lambda d: d["session"] is not None,
        ),
        Operation(
            "game sessions (first 20, player names)",
            "query($game: ID!) { gameSessions(gameId: $game, first: 20) {"
            " edges { node { score player { name } } } } }",
            lambda rng: {"game": rng.choice(GAMES)},
            raw.game_sessions,
            lambda d: (
                bool(_edges(d["gameSessions"]))
                and all(e["node"]["player"]["name"] for e in _edges(d["gameSessions"]))
            ),
        ),
        Operation(
            "leaderboard metadata",
            "query($id: ID!) { leaderboard(id: $id) {"
            " name period sortOrder scoreWidth entryCount } }",
            lambda rng: {"id": board_id},
            raw.leaderboard,
            lambda d: d["leaderboard"]["entryCount"] == entries,
        ),
        Operation(
            "rank of a mid-board player",
            "query($id: ID!, $board: ID!) { player(id: $id) {"
            " rank(leaderboardId: $board) { rank total } } }",
            lambda rng: {"id": rng.choice(mid).player_id, "board": board_id},
            raw.rank,
            lambda d: d["player"]["rank"]["total"] == entries,
        ),
        Operation(
            "profile page (PlayerProfile, 3 boards)",
            example_operation("PlayerProfile"),
            lambda rng: {
                "playerId": rng.choice(on_all).player_id,
                "leaderboardIds": list(PROFILE_BOARDS),
                "mainLeaderboardId": board_id,
            },
            raw.profile_page,
            lambda d: (
                len(d["player"]["ranks"]) == len(PROFILE_BOARDS)
                and d["player"]["ranks"][0]["total"] == entries
                and d["player"]["entry"]["rank"] == d["player"]["ranks"][0]["rank"]
                and len(_edges(d["player"]["sessions"])) >= 1
            ),
        ),
        Operation(
            "submitScore",
            "mutation($i: SubmitScoreInput!) { submitScore(input: $i) {"
            " improved session { id } } }",
            lambda rng: {
                "i": {
                    "playerId": anyone(rng).player_id,
                    "leaderboardId": board_id,
                    "gameId": rng.choice(GAMES),
                    "score": rng.randint(0, top),
                    "durationSec": rng.randint(30, 900),
                }
            },
            raw.submit_score,
            lambda d: d["submitScore"]["session"] is not None,
        ),
    ]
