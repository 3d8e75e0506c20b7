"""The read cost of an uncached top-100 page on a board of N partitions: its DynamoDB calls and
read units, measured through the service's GraphQL API (its response cache off).

For each N a board of N partitions is written with a Score item for each loaded player, at
the player's score (with BatchWriteItem through a client the recorder does not watch, each
item as a play writes it: :func:`bench.core.items.score_item`), and its top 100 with names is
read once (:data:`bench.capacity.operations.TOP_100`): the board with its count shards (one
Query), one Query per partition of up to 101 Score items, sent at once and merged on their
sort keys, each holding its player's name (a player read for its name would show as a
BatchGetItem). Its units are split between those three.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.capacity.operations import TOP_100
from bench.capacity.probe import Probe
from bench.capacity.recorder import RecordedRead
from bench.capacity.units import read_of
from bench.core.items import score_item
from bench.core.loading import batch_write
from bench.core.measure import BenchError
from bench.core.workload import LoadedPlayer, new_player
from dynamo.db import Db
from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, Period, create_leaderboard
from dynamo.scores import ScoreItem, holds_score

__all__ = ["PageCost", "top_page_costs"]

_BOARD, _SCORES, _NAMES = "board", "Score partitions", "names"


@dataclass(frozen=True)
class PageCost:
    """One uncached top-100 page on a board of ``partitions`` partitions and ``entries``
    entries: its DynamoDB calls by name, and its read units on the board's item and count
    shards, on its Score partitions and on the players' names."""

    partitions: int
    entries: int
    calls: dict[str, int]
    board_read: float
    score_read: float
    names_read: float

    @property
    def read(self) -> float:
        """Every read unit of the page."""
        return self.board_read + self.score_read + self.names_read

    @property
    def call_count(self) -> int:
        """DynamoDB calls of the page."""
        return sum(self.calls.values())

    def document(self) -> dict[str, Any]:
        """The page's cost, as the JSON report holds it."""
        return {
            "partitions": self.partitions,
            "entries": self.entries,
            "calls": dict(self.calls),
            "read_units": self.read,
            "read_units_board": self.board_read,
            "read_units_score_partitions": self.score_read,
            "read_units_names": self.names_read,
        }


def _part(read: RecordedRead) -> str:
    """Which part of the page a read is: the names (read by key), the Score partitions (a
    Query of Score items) or the board."""
    if read.per_item:
        return _NAMES
    keys = ({"pk": i["pk"]["S"], "sk": i["sk"]["S"]} for i in read.items)
    return _SCORES if any(holds_score(k) for k in keys) else _BOARD


async def _fill(writer: Db, partitions: int, players: Sequence[LoadedPlayer]) -> str:
    """A new board of ``partitions`` partitions holding an entry of each of ``players``,
    written through ``writer``."""
    at = now()
    board = LeaderboardItem(
        leaderboard_id=f"top-page-{partitions}",
        name=f"Top page, {partitions} partitions",
        period=Period.GLOBAL,
        partitions=partitions,
        created_at=at,
    )
    await create_leaderboard(writer, board)
    entries = [
        ScoreItem(
            leaderboard_id=board.leaderboard_id,
            player_id=p.player_id,
            score=p.score,
            attained_at=at,
            session_id=p.session_id,
            version=1,
            player_name=new_player(p.player_id, at).name,
        )
        for p in players
    ]
    await batch_write(writer, [score_item(board, e) for e in entries])
    return board.leaderboard_id


async def top_page_costs(
    probe: Probe, writer: Db, partitions: Sequence[int], players: Sequence[LoadedPlayer]
) -> list[PageCost]:
    """The cost of the top 100 with names on a board of each of ``partitions`` partitions
    holding ``players`` (the boards written through ``writer``, on the probe's table)."""
    costs = []
    for n in partitions:
        board_id = await _fill(writer, n, players)
        probe.recorder.take()
        data = await probe.gql(TOP_100, {"id": board_id})
        calls = probe.recorder.take()
        shown = len(data["leaderboard"]["topScores"]["edges"])
        if shown != min(100, len(players)):
            raise BenchError(f"the top 100 of {board_id} showed {shown} entries")
        names: dict[str, int] = defaultdict(int)
        units: dict[str, float] = defaultdict(float)
        for call in calls:
            names[call.operation] += 1
            for read in call.reads:
                units[_part(read)] += read_of(read)
        costs.append(
            PageCost(
                partitions=n,
                entries=len(players),
                calls=dict(names),
                board_read=units[_BOARD],
                score_read=units[_SCORES],
                names_read=units[_NAMES],
            )
        )
    return costs
