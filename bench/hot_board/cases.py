"""The cases a run measures: the same clients and players, their plays on one board of each
number of partitions asked for, and spread over several boards; and which game-server client
plays which players on which board.

Every board is a daily family's board of the day, created by the first play that finds it
missing, as a new daily board is at midnight.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Case", "Seat", "cases", "player_ids", "seats"]

Seat = list[tuple[str, str]]
"""One game-server client's players, each with the family it plays on, in the order it plays
them."""


@dataclass(frozen=True)
class Case:
    """The load laid out on ``boards`` boards of ``partitions`` partitions each."""

    boards: int
    partitions: int

    @property
    def name(self) -> str:
        where = "one board" if self.boards == 1 else f"{self.boards} boards"
        return f"{where}, N = {self.partitions}"

    @property
    def spread(self) -> bool:
        """Whether the load is spread over several boards (the comparison's baseline)."""
        return self.boards > 1

    def family_ids(self, tag: str) -> list[str]:
        """The ids of the case's families in a run tagged ``tag`` (each run has its own)."""
        return [f"hot-{tag}-b{self.boards}-n{self.partitions}-{n:02d}" for n in range(self.boards)]


def cases(partitions: Sequence[int], spread_boards: int) -> list[Case]:
    """The load spread over ``spread_boards`` boards of one partition (none when 0), then on
    one board of each number of ``partitions``: the baseline first, so that the one-board
    cases run on the larger table (a table that grows slows DynamoDB Local's writes)."""
    found = [Case(spread_boards, 1)] if spread_boards > 1 else []
    return found + [Case(1, n) for n in partitions]


def player_ids(clients: int, per_client: int) -> list[str]:
    """Every player of the run, ``per_client`` for each client."""
    return [f"hot-{n:05d}" for n in range(clients * per_client)]


def seats(players: Sequence[str], clients: int, families: Sequence[str]) -> list[Seat]:
    """The players split among ``clients`` game-server clients, each its own run of them (no
    player is ever played by two clients), player number ``k`` playing on family
    ``k mod len(families)``."""
    per_client = len(players) // clients
    return [
        [
            (players[k], families[k % len(families)])
            for k in range(c * per_client, (c + 1) * per_client)
        ]
        for c in range(clients)
    ]
