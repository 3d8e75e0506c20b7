"""A serving process's heap settled at its start (leaderboard/heap.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from leaderboard import heap


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Give the test process's frozen objects back to the collector afterwards."""
    try:
        yield
    finally:
        gc.unfreeze()


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
