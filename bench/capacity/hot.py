"""The hot-board simulation: plays at a fixed rate on one board through the table layer's own
submission path (:func:`dynamo.play_writes.record_play`, what ``submitScore`` calls), their
write units grouped by partition key and by second.

The boards played here have one partition, the default: all of a board's Score items share
its partition key with the board's own item and its count shards, so every play that writes
the board (a first entry's count shard; the old Score item deleted and the new one put)
spends write units on that one partition, which DynamoDB serves up to about
:data:`PARTITION_WCU` write units a second; a play that leaves its entry as it was writes
nothing there. The player's items (session, player, entry guard, play record) are on the
player's partition and spread. Boards of N partitions are measured by
:mod:`bench.capacity.sharded`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.capacity.probe import Probe, board_partition
from bench.capacity.recorder import RecordedCall
from bench.capacity.units import table_write
from bench.core.workload import GAMES, LoadedPlayer
from dynamo.errors import LeaderboardError
from dynamo.items import now
from dynamo.leaderboards import (
    ENTRY_COUNT_SHARD,
    LeaderboardItem,
    Operator,
    Period,
    create_leaderboard,
)
from dynamo.play_writes import record_play
from dynamo.plays import Play
from dynamo.scores import SCORE

__all__ = ["PARTITION_RCU", "PARTITION_WCU", "SCORE_RANGE", "HotResult", "hot_board", "item_kind"]

PARTITION_WCU = 1000.0
"""Write units a second one partition serves."""
PARTITION_RCU = 3000.0
"""Read units a second one partition serves."""

SCORE_RANGE = {Operator.BEST: 1000, Operator.LATEST: 1000, Operator.INCREMENT: 10}
"""The largest score a simulated play of each operator draws (from 0, uniformly)."""


@dataclass(frozen=True)
class HotResult:
    """One operator's run: plays offered and completed, the board partition's write units
    (per second, per play, by item kind), the hottest partition and the plays per second one
    board takes before its partition's ceiling."""

    operator: str
    offered_per_second: float
    seconds: float
    players: int
    plays: int
    failed_plays: int
    failed_calls: int
    board_wcu_per_second: float
    board_wcu_peak_second: float
    hottest_partition: str
    hottest_wcu_per_second: float
    board_wcu_per_play: float
    board_wcu_per_play_by_item: dict[str, float] = field(default_factory=dict)

    @property
    def ceiling_plays_per_second(self) -> float:
        """Plays a second before the board's partition reaches :data:`PARTITION_WCU`."""
        return PARTITION_WCU / self.board_wcu_per_play if self.board_wcu_per_play else 0.0

    def document(self) -> dict[str, Any]:
        """The run's numbers, as the JSON report holds them."""
        return {
            "operator": self.operator,
            "offered_plays_per_second": self.offered_per_second,
            "seconds": self.seconds,
            "players": self.players,
            "plays": self.plays,
            "failed_plays": self.failed_plays,
            "failed_calls": self.failed_calls,
            "board_wcu_per_second": round(self.board_wcu_per_second, 2),
            "board_wcu_peak_second": round(self.board_wcu_peak_second, 2),
            "hottest_partition": self.hottest_partition,
            "hottest_wcu_per_second": round(self.hottest_wcu_per_second, 2),
            "board_wcu_per_play": round(self.board_wcu_per_play, 3),
            "board_wcu_per_play_by_item": {
                k: round(v, 3) for k, v in self.board_wcu_per_play_by_item.items()
            },
            "ceiling_plays_per_second": round(self.ceiling_plays_per_second, 1),
        }


def item_kind(sk: str) -> str:
    """What an item under one of a board's partition keys is, by its sort key: one of its
    Score items, one of its count shards (under its own key, or a write-sharded board's Score
    keys: the same sort keys), or the board's item."""
    if SCORE.sk.match(sk) is not None:
        return "Score items"
    return "count shards" if ENTRY_COUNT_SHARD.sk.match(sk) is not None else "board item"


async def _drive(
    probe: Probe,
    board_id: str,
    operator: Operator,
    players: Sequence[LoadedPlayer],
    rate: float,
    seconds: float,
    rng: random.Random,
) -> tuple[float, int, int]:
    """Start a play every 1/rate seconds for ``seconds``; when it started, plays completed
    and plays failed."""
    top = SCORE_RANGE[operator]
    failed = 0

    async def play(player: LoadedPlayer, score: int) -> None:
        nonlocal failed
        try:
            await record_play(
                probe.db,
                Play(player.player_id, rng.choice(GAMES), score, leaderboard_ids=(board_id,)),
            )
        except LeaderboardError:
            failed += 1

    total = round(rate * seconds)
    started = time.perf_counter()
    tasks = []
    for i in range(total):
        await asyncio.sleep(max(0.0, started + i / rate - time.perf_counter()))
        tasks.append(asyncio.create_task(play(rng.choice(players), rng.randint(0, top))))
    await asyncio.gather(*tasks)
    return started, total - failed, failed


async def hot_board(
    probe: Probe,
    operator: Operator,
    players: Sequence[LoadedPlayer],
    *,
    rate: float,
    seconds: float,
    rng: random.Random,
) -> HotResult:
    """Play ``rate`` plays a second for ``seconds`` on a new board of ``operator``, by
    players drawn from ``players`` (a first entry for each player's first play, then changes
    or none as the scores fall), and group their write units by partition and second."""
    board_id = f"hot-{operator.value.lower()}"
    await create_leaderboard(
        probe.db,
        LeaderboardItem(
            leaderboard_id=board_id,
            name=f"Hot {operator.value}",
            period=Period.GLOBAL,
            operator=operator,
            created_at=now(),
        ),
    )
    probe.recorder.take()
    started, plays, failed = await _drive(probe, board_id, operator, players, rate, seconds, rng)
    calls: list[RecordedCall] = probe.recorder.take()
    by_second: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    by_partition: dict[str, float] = defaultdict(float)
    by_item: dict[str, float] = defaultdict(float)
    board = board_partition(board_id)
    for call in calls:
        second = int(call.at - started)
        for write in call.writes:
            units = table_write(write)
            by_second[second][write.key[0]] += units
            by_partition[write.key[0]] += units
            if write.key[0] == board:
                by_item[item_kind(write.key[1])] += units
    span = max(seconds, max((c.at for c in calls), default=started) - started)
    hottest = max(by_partition, key=by_partition.__getitem__)
    done = max(plays, 1)
    return HotResult(
        operator=operator.value,
        offered_per_second=rate,
        seconds=seconds,
        players=len(players),
        plays=plays,
        failed_plays=failed,
        failed_calls=sum(1 for c in calls if c.error is not None),
        board_wcu_per_second=by_partition[board] / span,
        board_wcu_peak_second=max(s.get(board, 0.0) for s in by_second.values()),
        hottest_partition=hottest,
        hottest_wcu_per_second=by_partition[hottest] / span,
        board_wcu_per_play=by_partition[board] / done,
        board_wcu_per_play_by_item={k: v / done for k, v in sorted(by_item.items())},
    )
