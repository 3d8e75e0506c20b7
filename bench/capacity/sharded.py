"""Write-sharded boards measured through the write path: what each play writes to each
partition key of a board of N partitions, and which of the board's items its transaction
holds.

For each operator and each N, a new board of N partitions is played by a pool of players of
one game through the table layer's own submission path (:func:`dynamo.play_writes.record_play`,
what ``submitScore`` calls), each player once (``first entries``: every play a first entry, a
new daily board at midnight), then each once more (``steady``: every player already entered;
the play changes its entry or not by the board's operator and the score drawn). Every
DynamoDB request is recorded with the items it wrote (:mod:`bench.capacity.recorder`), and its
write units are grouped by partition key: the board's own (``LEADERBOARD#<id>``: its item and,
on a board of one partition, its Score items and count shards), the board's Score partition
keys (N > 1: its Score items and its count shards), the players' own (``PLAYER#<id>``), and
each index partition key. The transactions that held the board's item, a count shard, or an
item some other player's play held too are counted, and the most keys of the board one
transaction wrote. Units are counts, not timings: what a play writes does not depend on
how fast plays arrive, so :mod:`bench.capacity.ceiling` turns these into the figures at any
rate.
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.capacity.hot import SCORE_RANGE, item_kind
from bench.capacity.probe import Probe, board_partition
from bench.capacity.recorder import RecordedCall
from bench.capacity.units import index_writes, table_write
from bench.core.workload import GAMES, LoadedPlayer
from dynamo.errors import LeaderboardError
from dynamo.items import now
from dynamo.leaderboards import LeaderboardItem, Operator, Period, create_leaderboard
from dynamo.play_writes import record_play
from dynamo.players import PLAYER
from dynamo.plays import Play, PlayResult
from dynamo.scores import score_partitions

__all__ = [
    "FIRST_ENTRIES",
    "GAME",
    "PHASES",
    "PLAY_CONCURRENCY",
    "STEADY",
    "PhaseRun",
    "play_sharded",
    "sharded_board_id",
]

FIRST_ENTRIES = "first entries"
STEADY = "steady"
PHASES = (FIRST_ENTRIES, STEADY)
GAME = GAMES[0]
"""The one game every play is of: a board's crowd plays one game."""
PLAY_CONCURRENCY = 8
"""Plays in flight at once (of distinct players; what they write does not depend on it)."""

_PLAYERS_ITEMS = "the player's items"


@dataclass(frozen=True)
class PhaseRun:
    """What the plays of one phase on one board wrote: plays made, failed, first entries and
    entries changed (as the plays answered); write units by partition key, in total over the
    phase; the transactions that held the board's item or a count shard; the items held by
    plays of more than one player, by kind."""

    operator: str
    partitions: int
    phase: str
    plays: int
    failed_plays: int
    failed_calls: int
    first_entries: int
    changed: int
    board_key_wcu: float
    """On the board's own partition key, ``LEADERBOARD#<id>``."""
    score_keys_wcu: float
    """On the board's Score partition keys other than its own (none on a board of one)."""
    score_keys_written: int
    player_wcu: float
    """On the players' own partition keys (session, player, entry guard)."""
    other_wcu: float
    """On any other partition key of the table."""
    busiest_index_key: str
    """The index partition key written most: ``<index> <key>``."""
    busiest_index_wcu: float
    board_item_transactions: int
    count_shard_transactions: int
    board_keys_per_transaction: int = 0
    """The most partition keys of the board (its own and its Score keys) one transaction
    wrote."""
    board_key_wcu_by_item: dict[str, float] = field(default_factory=dict)
    score_keys_wcu_by_item: dict[str, float] = field(default_factory=dict)
    shared_items: dict[str, int] = field(default_factory=dict)
    """Items held by the transactions of more than one player: how many, by kind."""

    def per_play(self, units: float) -> float:
        """``units`` (a total of the phase) per play made."""
        return units / self.plays if self.plays else 0.0

    def document(self) -> dict[str, Any]:
        """The phase's measured numbers, as the JSON report holds them (units per play)."""
        return {
            "operator": self.operator,
            "partitions": self.partitions,
            "phase": self.phase,
            "plays": self.plays,
            "failed_plays": self.failed_plays,
            "failed_calls": self.failed_calls,
            "first_entries": self.first_entries,
            "entries_changed": self.changed,
            "wcu_per_play": {
                "board_key": round(self.per_play(self.board_key_wcu), 3),
                "board_key_by_item": {
                    k: round(self.per_play(v), 3) for k, v in self.board_key_wcu_by_item.items()
                },
                "score_keys": round(self.per_play(self.score_keys_wcu), 3),
                "score_keys_by_item": {
                    k: round(self.per_play(v), 3) for k, v in self.score_keys_wcu_by_item.items()
                },
                "players_keys": round(self.per_play(self.player_wcu), 3),
                "other_keys": round(self.per_play(self.other_wcu), 3),
                "busiest_index_key": round(self.per_play(self.busiest_index_wcu), 3),
            },
            "score_keys_written": self.score_keys_written,
            "busiest_index_key": self.busiest_index_key,
            "board_item_transactions": self.board_item_transactions,
            "count_shard_transactions": self.count_shard_transactions,
            "board_keys_per_transaction": self.board_keys_per_transaction,
            "shared_items": dict(self.shared_items),
        }


def sharded_board_id(operator: Operator, partitions: int) -> str:
    """The board a phase of ``operator`` on ``partitions`` partitions plays on."""
    return f"sharded-{operator.value.lower()}-{partitions}"


def _player_of(call: RecordedCall) -> str | None:
    """The player whose play a transaction is: the one whose Player item it writes."""
    for write in call.writes:
        found = PLAYER.pk.match(write.key[0])
        if found is not None and PLAYER.holds({"pk": write.key[0], "sk": write.key[1]}):
            return found["player_id"]
    return None


def _tally(
    board: LeaderboardItem,
    operator: Operator,
    phase: str,
    results: Sequence[PlayResult | None],
    calls: Sequence[RecordedCall],
) -> PhaseRun:
    own = board_partition(board.leaderboard_id)
    score_keys = set(score_partitions(board)) - {own}
    board_keys = {own, *score_keys}
    by_key: dict[str, float] = defaultdict(float)
    by_item: dict[str, float] = defaultdict(float)
    by_score_item: dict[str, float] = defaultdict(float)
    by_index: dict[str, float] = defaultdict(float)
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    board_item = count_shard = most_keys = 0
    for call in calls:
        player = _player_of(call)
        kinds: set[str] = set()
        written: set[str] = set()
        for write in call.writes:
            units = table_write(write)
            pk, sk = write.key
            by_key[pk] += units
            if pk in board_keys:
                kinds.add(item_kind(sk))
                written.add(pk)
                (by_item if pk == own else by_score_item)[item_kind(sk)] += units
            if write.transactional and player is not None:
                holders[write.key].add(player)
            for index, index_pk, n in index_writes(write):
                by_index[f"{index} {index_pk}"] += n
        board_item += "board item" in kinds
        count_shard += "count shards" in kinds
        most_keys = max(most_keys, len(written))
    shared: dict[str, int] = defaultdict(int)
    for (pk, sk), players in holders.items():
        if len(players) > 1:
            shared[item_kind(sk) if pk in board_keys else _PLAYERS_ITEMS] += 1
    players_keys = {k for k in by_key if PLAYER.pk.match(k) is not None}
    index_key = max(by_index, key=by_index.__getitem__, default="")
    made = [r for r in results if r is not None]
    return PhaseRun(
        operator=operator.value,
        partitions=board.partitions,
        phase=phase,
        plays=len(made),
        failed_plays=len(results) - len(made),
        failed_calls=sum(1 for c in calls if c.error is not None),
        first_entries=sum(1 for r in made if r.boards[0].first),
        changed=sum(1 for r in made if r.boards[0].improved),
        board_key_wcu=by_key.get(own, 0.0),
        score_keys_wcu=sum(v for k, v in by_key.items() if k in score_keys),
        score_keys_written=sum(1 for k in by_key if k in score_keys),
        player_wcu=sum(by_key[k] for k in players_keys),
        other_wcu=sum(v for k, v in by_key.items() if k not in {own, *score_keys, *players_keys}),
        busiest_index_key=index_key,
        busiest_index_wcu=by_index.get(index_key, 0.0),
        board_item_transactions=board_item,
        count_shard_transactions=count_shard,
        board_keys_per_transaction=most_keys,
        board_key_wcu_by_item=dict(sorted(by_item.items())),
        score_keys_wcu_by_item=dict(sorted(by_score_item.items())),
        shared_items=dict(sorted(shared.items())),
    )


async def _phase(
    probe: Probe, board: LeaderboardItem, players: Sequence[LoadedPlayer], scores: Sequence[int]
) -> tuple[list[PlayResult | None], list[RecordedCall]]:
    """One play of each player with its score, :data:`PLAY_CONCURRENCY` at a time; each
    play's result (None when refused) and the DynamoDB requests they made."""
    gate = asyncio.Semaphore(PLAY_CONCURRENCY)

    async def play(player: LoadedPlayer, score: int) -> PlayResult | None:
        async with gate:
            try:
                return await record_play(
                    probe.db,
                    Play(player.player_id, GAME, score, leaderboard_ids=(board.leaderboard_id,)),
                )
            except LeaderboardError:
                return None

    probe.recorder.take()
    results = await asyncio.gather(*(play(p, s) for p, s in zip(players, scores, strict=True)))
    return list(results), probe.recorder.take()


async def play_sharded(
    probe: Probe,
    operator: Operator,
    partitions: int,
    players: Sequence[LoadedPlayer],
    rng: random.Random,
) -> list[PhaseRun]:
    """Create a board of ``operator`` on ``partitions`` partitions and play it with
    ``players``: a phase of first entries, then a steady phase; what each wrote."""
    board = LeaderboardItem(
        leaderboard_id=sharded_board_id(operator, partitions),
        name=f"Write-sharded {operator.value}, {partitions} partitions",
        period=Period.GLOBAL,
        operator=operator,
        partitions=partitions,
        created_at=now(),
    )
    await create_leaderboard(probe.db, board)
    runs = []
    for phase in PHASES:
        scores = [rng.randint(0, SCORE_RANGE[operator]) for _ in players]
        results, calls = await _phase(probe, board, players, scores)
        runs.append(_tally(board, operator, phase, results, calls))
    return runs
