"""Score operators (BEST, LATEST, INCREMENT) in both sort orders, and their race safety."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from dynamo.entry_guards import ENTRY_GUARD
from dynamo.scores import holds_score
from tests.conftest import Api, each_layout
from tests.scan import scan_items

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
PLAYS = [("a", 50), ("b", 30), ("a", 20), ("c", 50), ("b", 40), ("d", 30), ("c", 10), ("d", 0)]
CASES = [(op, order) for op in ("BEST", "LATEST", "INCREMENT") for order in ("DESC", "ASC")]


def oracle(operator: str, order: str) -> list[tuple[str, int, int]]:
    """(player, score, rank) best first, computed from the plays by the operator's definition."""
    entries: dict[str, tuple[int, int]] = {}  # player -> (score, index of the play attaining it)
    for i, (player, score) in enumerate(PLAYS):
        old = entries.get(player)
        if old is None or operator == "LATEST":
            entries[player] = (score, i)
        elif operator == "INCREMENT":
            entries[player] = (old[0] + score, i) if score else old
        elif (score > old[0]) if order == "DESC" else (score < old[0]):
            entries[player] = (score, i)
    sign = -1 if order == "DESC" else 1
    ordered = sorted(entries.items(), key=lambda e: (sign * e[1][0], e[1][1]))
    return [
        (p, s, 1 + sum(1 for _, (o, _i) in entries.items() if sign * o < sign * s))
        for p, (s, _) in ordered
    ]


@each_layout
@pytest.mark.parametrize(("operator", "order"), CASES)
async def test_operator_and_sort_order(api: Api, operator: str, order: str) -> None:
    for player in "abcd":
        await api.create_player(player)
    await api.create_board("b", operator=operator, sortOrder=order)
    improved = []
    for i, (player, score) in enumerate(PLAYS):
        api.clock.set(T0 + timedelta(seconds=i))
        improved.append((await api.submit(player, "b", score))["improved"])

    data = await api.gql(
        """{ leaderboard(id: "b") { operator sortOrder entryCount
             topScores { edges { node { score rank player { id } } } } } }"""
    )
    board = data["leaderboard"]
    assert (board["operator"], board["sortOrder"], board["entryCount"]) == (operator, order, 4)
    got = [
        (e["node"]["player"]["id"], e["node"]["score"], e["node"]["rank"])
        for e in board["topScores"]["edges"]
    ]
    assert got == oracle(operator, order)
    ranks = await api.gql(
        " ".join(
            [
                "{",
                *(
                    f'{p}: player(id: "{p}") {{ rank(leaderboardId: "b") {{ rank }} }}'
                    for p in "abcd"
                ),
                "}",
            ]
        )
    )
    assert {p: ranks[p]["rank"]["rank"] for p in "abcd"} == {p: r for p, _, r in got}
    if operator == "LATEST":
        assert all(improved)
    if operator == "INCREMENT":
        assert improved == [True, True, True, True, True, True, True, False]
    items = await scan_items(api.db)
    assert sum(1 for i in items if holds_score(i)) == 4


@each_layout
@pytest.mark.parametrize("order", ["DESC", "ASC"])
async def test_fifty_concurrent_increments_sum_exactly(api: Api, order: str) -> None:
    await api.create_player("runner")
    await api.create_board("km", operator="INCREMENT", sortOrder=order, scoreWidth=6)
    results = await asyncio.gather(*(api.submit("runner", "km", n) for n in range(1, 51)))
    assert all(r["errors"] == [] for r in results), [r["errors"] for r in results]
    data = await api.gql(
        """{ player(id: "runner") { gamesPlayed lifetimeScore
             bestScore(leaderboardId: "km") { score } }
             leaderboard(id: "km") { entryCount } }"""
    )
    assert data["player"] == {
        "gamesPlayed": 50,
        "lifetimeScore": 1275,
        "bestScore": {"score": 1275},
    }
    assert data["leaderboard"]["entryCount"] == 1
    items = await scan_items(api.db)
    assert [i["score"] for i in items if holds_score(i)] == [1275]


@each_layout
async def test_concurrent_latest_leaves_one_entry_of_a_submitted_score(api: Api) -> None:
    await api.create_player("p")
    await api.create_board("latest", operator="LATEST")
    scores = list(range(100, 130))
    results = await asyncio.gather(*(api.submit("p", "latest", s) for s in scores))
    assert all(r["errors"] == [] and r["improved"] for r in results)
    items = await scan_items(api.db)
    entries = [i for i in items if holds_score(i)]
    assert len(entries) == 1
    guard = next(i for i in items if ENTRY_GUARD.holds(i) and i["leaderboardId"] == "latest")
    assert guard["scoreSk"] == entries[0]["sk"]
    assert entries[0]["score"] in scores


async def test_increment_total_cannot_overflow_the_width(api: Api) -> None:
    await api.create_player("p")
    await api.create_board("small", operator="INCREMENT", scoreWidth=3)
    assert (await api.submit("p", "small", 900))["errors"] == []
    before = await scan_items(api.db)
    over = await api.submit("p", "small", 100)
    assert [(e["code"], e["field"]) for e in over["errors"]] == [("SCORE_OUT_OF_RANGE", "score")]
    assert len(await scan_items(api.db)) == len(before)


async def test_entry_answers_the_entry_of_each_operator_and_best_score_is_its_deprecated_alias(
    api: Api,
) -> None:
    await api.create_player("p")
    for operator in ("BEST", "LATEST", "INCREMENT"):
        await api.create_board(operator.lower(), operator=operator)
        for score in (50, 70, 20):
            await api.submit("p", operator.lower(), score)
    data = await api.gql(
        """{ player(id: "p") {
            best: entry(leaderboardId: "best") { score }
            latest: entry(leaderboardId: "latest") { score }
            increment: entry(leaderboardId: "increment") { score }
            none: entry(leaderboardId: "nowhere") { score }
            old: bestScore(leaderboardId: "latest") { score } } }"""
    )
    assert data["player"] == {
        "best": {"score": 70},
        "latest": {"score": 20},
        "increment": {"score": 140},
        "none": None,
        "old": {"score": 20},
    }
    fields = await api.gql(
        """{ __type(name: "Player") { fields(includeDeprecated: true) {
            name isDeprecated deprecationReason } } }"""
    )
    by_name = {f["name"]: f for f in fields["__type"]["fields"]}
    assert by_name["entry"]["isDeprecated"] is False
    assert by_name["bestScore"]["isDeprecated"] is True
    assert "entry(leaderboardId)" in by_name["bestScore"]["deprecationReason"]
