"""The operation catalogue: every benchmarked access pattern as a GraphQL document, how its
variables are picked, its raw aioboto3 counterpart and a check of the response.

Besides one operation per access pattern, two pages as a frontend sends them, with the exact
documents of ``examples/operations/``: ``LeaderboardPage`` (the top 100 with names and ranks)
and ``PlayerProfile`` (a player's rank on three boards, best score and last ten sessions).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.access_patterns.raw_calls import RawCalls
from bench.core.documents import example_operation
from bench.core.workload import GAMES, PROFILE_BOARDS, TOP_N, LoadedPlayer, Variables
from dynamo.db import Db
from dynamo.leaderboards import LeaderboardItem

__all__ = ["Operation", "operations"]


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


def operations(
    db: Db, board: LeaderboardItem, loaded: Sequence[LoadedPlayer], entries: int
) -> list[Operation]:
    """The benchmarked operations, reads first and the submission last."""
    raw = RawCalls(db, board)
    board_id = board.leaderboard_id
    by_score = sorted(loaded, key=lambda p: p.score, reverse=True)
    # The middle tenth of the board: the COUNT Query of a rank reads about half the board.
    lo = int(len(by_score) * 0.45)
    mid = by_score[lo : max(int(len(by_score) * 0.55), lo + 1)]
    top = max(1, entries // 3)
    # Players on all three boards, for the profile page (every player when the boards were
    # loaded on the main board alone: their other ranks are null).
    on_all = [p for p in loaded if p.board_ids == PROFILE_BOARDS] or list(loaded)

    def anyone(rng: random.Random) -> LoadedPlayer:
        return rng.choice(loaded)

    def session_of(rng: random.Random) -> Variables:
        player = anyone(rng)
        return {"playerId": player.player_id, "sessionId": player.session_id}

    return [
        Operation(
            "top 100 with player names",
            "query($id: ID!) { leaderboard(id: $id) { topScores(first: 100) {"
            " edges { node { score player { name } } } } } }",
            lambda rng: {"id": board_id},
            raw.top_scores,
            lambda d: (
                len(_edges(d["leaderboard"]["topScores"])) == min(TOP_N, entries)
                and all(e["node"]["player"]["name"] for e in _edges(d["leaderboard"]["topScores"]))
            ),
        ),
        Operation(
            "leaderboard page (LeaderboardPage, first 100)",
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
        ),
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
