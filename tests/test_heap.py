"""A serving process's heap settled at its start (leaderboard/heap.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from dynamo.scores import ScoreItem
from leaderboard import heap
from tests.conftest import Api


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Give the test process's frozen objects back to the collector afterwards, with its
    thresholds."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_what_the_start_made_is_frozen_and_what_comes_later_is_collected(
    unfrozen: None,
) -> None:
    started = [_Node() for _ in range(100)]
    frozen = heap.settle()
    assert frozen == gc.get_freeze_count()
    assert frozen > len(started)
    # Frozen: in none of the generations a collection walks.
    walked = {id(o) for o in gc.get_objects()}
    assert not walked & {id(n) for n in started}

    # A cycle made after the freeze is garbage the next collection frees.
    first, second = _Node(), _Node()
    first.other, second.other = second, first
    del first, second
    assert gc.collect() >= 2
    assert gc.get_freeze_count() == frozen


def test_the_youngest_generation_waits_for_more_objects_once_settled(unfrozen: None) -> None:
    _, older, oldest = gc.get_threshold()
    heap.settle()
    assert gc.get_threshold() == (heap.YOUNG_THRESHOLD, older, oldest)


async def test_an_answered_requests_entries_are_freed_without_a_collection(api: Api) -> None:
    """The entries a page read are freed by their reference counts once it is answered, not
    left in the reference cycles an execution leaves for the collector to find."""
    await api.create_board("freed", minScore=0, maxScore=1_000)
    for i in range(20):
        await api.create_player(f"freed-{i:02}", f"Player {i}")
        data = await api.gql(
            """mutation($i: SubmitScoreInput!) { submitScore(input: $i) { errors { code } } }""",
            {
                "i": {
                    "playerId": f"freed-{i:02}",
                    "leaderboardId": "freed",
                    "gameId": "g",
                    "score": i,
                }
            },
        )
        assert data["submitScore"]["errors"] == []
    query = '{ leaderboard(id: "freed") { topScores(first: 100) { edges { node { score } } } } }'
    await api.gql(query)  # the first execution made what later ones reuse
    gc.collect()
    gc.disable()
    try:
        data = await api.gql(query)
        assert len(data["leaderboard"]["topScores"]["edges"]) == 20
        # This test's entries only: another test's may still be held where this one cannot
        # see (a cache, a task left running).
        alive = [
            o for o in gc.get_objects() if isinstance(o, ScoreItem) and o.leaderboard_id == "freed"
        ]
    finally:
        gc.enable()
    assert alive == []
