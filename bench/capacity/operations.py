"""The operations whose units are measured, each through the service's GraphQL API: a page of
the top 100 with names, the frontend's leaderboard and profile pages, plays on a BEST, a LATEST
and an INCREMENT board (a first entry, a change, no change), a play on three boards, and a
player's rank by COUNT Queries and from the rank index."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import partial
from typing import Any

from bench.capacity.probe import Measured, Probe, measured
from bench.core.documents import PLAYER_RANK, example_operation
from bench.core.measure import BenchError
from bench.core.workload import BOARD_ID, PROFILE_BOARDS, TOP_N, LoadedPlayer, new_player
from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, Operator, Period, create_leaderboard
from dynamo.players import create_player

__all__ = [
    "PLAY_STEPS",
    "TOP_100",
    "play_board_id",
    "play_operations",
    "rank_operations",
    "read_operations",
    "submit",
]

TOP_100 = (
    "query Top($id: ID!) { leaderboard(id: $id) { topScores(first: 100) {"
    " edges { node { score player { name } } } } } }"
)
"""The top 100 of a board with each player's name."""

SUBMIT = example_operation("SubmitScore")

PLAY_STEPS: dict[Operator, tuple[tuple[str, int], ...]] = {
    Operator.BEST: (("first entry", 500), ("improvement", 700), ("no improvement", 600)),
    Operator.LATEST: (("first entry", 500), ("a new latest score", 300), ("the same score", 300)),
    Operator.INCREMENT: (("first entry", 500), ("an increment", 20), ("an increment of 0", 0)),
}
"""Three plays of one player on a board of each operator, with their scores."""


def _a(operator: Operator) -> str:
    """``operator``'s name with its article: "a BEST", "an INCREMENT"."""
    return f"{'an' if operator.value[0] in 'AEIOU' else 'a'} {operator.value}"


def play_board_id(operator: Operator) -> str:
    """The board the plays of ``operator`` go to."""
    return f"capacity-{operator.value.lower()}"


async def submit(probe: Probe, player_id: str, score: int, board_ids: Sequence[str]) -> Any:
    """One play through submitScore (with a submission id, as a game server sends it); its
    payload, or BenchError when it carries errors."""
    data = await probe.gql(
        SUBMIT,
        {
            "playerId": player_id,
            "gameId": "arena",
            "score": score,
            "durationSec": 120,
            "submissionId": str(uuid.uuid4()),
            "leaderboardIds": list(board_ids),
        },
    )
    payload = data["submitScore"]
    if payload["errors"]:
        raise BenchError(f"submitScore failed: {payload['errors']}", code="USER_ERROR")
    return payload


async def read_operations(probe: Probe, profile_player: str) -> list[Measured]:
    """The page of the top 100 with names, the leaderboard page and the profile page."""
    documents: list[tuple[str, str, dict[str, Any]]] = [
        ("top 100 with player names", TOP_100, {"id": BOARD_ID}),
        (
            "leaderboard page (LeaderboardPage, first 100)",
            example_operation("LeaderboardPage"),
            {"leaderboardId": BOARD_ID, "first": TOP_N},
        ),
        (
            "profile page (PlayerProfile, 3 boards)",
            example_operation("PlayerProfile"),
            {
                "playerId": profile_player,
                "leaderboardIds": list(PROFILE_BOARDS),
                "mainLeaderboardId": BOARD_ID,
            },
        ),
    ]
    results = []
    for name, query, variables in documents:
        _, units = await probe.units_of(partial(probe.gql, query, variables))
        results.append(measured(name, units))
    return results


async def play_operations(probe: Probe) -> list[Measured]:
    """Three plays of a new player on a new board of each operator, then one play of another
    new player entering the three benchmark boards at once; each once the rank index (when
    the probe keeps one) holds everything written before it."""
    at = now()
    results = []
    for operator, steps in PLAY_STEPS.items():
        board_id = play_board_id(operator)
        await create_leaderboard(
            probe.db,
            LeaderboardItem(
                leaderboard_id=board_id,
                name=f"Capacity {operator.value}",
                period=Period.GLOBAL,
                operator=operator,
                created_at=at,
            ),
        )
        player = f"capacity-{operator.value.lower()}-player"
        await create_player(probe.db, new_player(player, at))
        for step, score in steps:
            await probe.in_step()
            _, units = await probe.units_of(partial(submit, probe, player, score, [board_id]))
            results.append(
                measured(f"play on {_a(operator)} board: {step}", units, board_id=board_id)
            )
    player = "capacity-multi-player"
    await create_player(probe.db, new_player(player, at))
    await probe.in_step()
    _, units = await probe.units_of(partial(submit, probe, player, 10, PROFILE_BOARDS))
    results.append(measured("play on 3 boards: first entries", units, board_id=BOARD_ID))
    return results


async def rank_operations(
    plain: Probe, indexed: Probe | None, players: Sequence[LoadedPlayer], entries: int
) -> list[Measured]:
    """A player's rank on the main board (the player in the middle of it): by COUNT Queries,
    and from the rank index when there is one."""
    middle = sorted(players, key=lambda p: p.score)[len(players) // 2]
    variables = {"playerId": middle.player_id, "leaderboardId": BOARD_ID}
    results = []
    probes = [("by COUNT", plain)] + ([("from the rank index", indexed)] if indexed else [])
    for how, probe in probes:
        await probe.in_step()
        data, units = await probe.units_of(partial(probe.gql, PLAYER_RANK, variables))
        if data["player"]["rank"] is None:
            raise BenchError(f"no rank for {middle.player_id}")
        results.append(measured(f"rank {how}, {entries:,} entries", units))
    return results
