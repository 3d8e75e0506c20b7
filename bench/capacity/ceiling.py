"""A write-sharded board's ceiling from what its plays write (:mod:`bench.capacity.sharded`):
the write units a second its busiest partition key receives at a given rate of plays, the
transactions a second its hottest item is in, and the plays a second each allows.

**The partition-key bound.** DynamoDB serves about :data:`PARTITION_WCU` write units a second
per partition key. At R plays a second, the board's own key (``LEADERBOARD#<id>``: on a board
of one partition, its Score items and its count shards) receives R times the units a play
writes there; a board of N partitions spreads its Score items, and with them its count shards,
over N keys by a hash of the player, and the busiest of them receives R times the units a play
writes on the Score keys (a first entry's count shard among them) times that key's share of
the players (:class:`Balance`: among :data:`CROWD` players, a little
over 1/N). The busiest of the board's keys bounds its plays a second at the rate that brings
it to :data:`PARTITION_WCU`.

**The conflict bound.** A transaction holds each of its items for about
:data:`HOLD_SECONDS`, and DynamoDB cancels another that touches one of them meanwhile, so one
item can be in at most :data:`ITEM_TRANSACTIONS` transactions a second. The board's hottest
item is the one the largest share of its plays hold: the board's item (which no play holds),
or the busiest of its count shards, :data:`~dynamo.leaderboards.COUNT_SHARDS` under each of its
N partition keys, which the first entries of its players hold (a little over 1/(32·N) of first
entries). A Score item or an entry
guard is one player's. At R plays a second the hottest item is in R times its share
transactions a second, and the conflict bound is the rate that brings it to
:data:`ITEM_TRANSACTIONS`.

A board's ceiling is the lower of the two. The index partition key its plays write most
(a Session's entry under its game, which every play of a game writes) is reported beside them:
it bounds a game's plays over all its boards, whatever their partitions.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.capacity.hot import PARTITION_WCU
from bench.capacity.sharded import FIRST_ENTRIES, STEADY, PhaseRun
from bench.core.workload import player_id
from dynamo.items import now
from dynamo.leaderboards import COUNT_SHARDS, LeaderboardItem, Period, count_shard_key
from dynamo.scores import score_partition

__all__ = [
    "CROWD",
    "HOLD_SECONDS",
    "ITEM_TRANSACTIONS",
    "TARGET_ITEM_TRANSACTIONS",
    "TARGET_PARTITIONS",
    "TARGET_RATE",
    "Balance",
    "Figures",
    "busiest_share",
    "choosing_partitions",
    "crowd_balance",
    "figures",
    "lowest",
    "target_verdict",
]

HOLD_SECONDS = 0.010
"""How long a transaction holds its items on DynamoDB: about 10 ms."""
ITEM_TRANSACTIONS = 1 / HOLD_SECONDS
"""The most transactions a second one item can be in, each holding it :data:`HOLD_SECONDS`."""
TARGET_RATE = 10_000.0
"""Target: one board takes this many plays a second of each operator ..."""
TARGET_PARTITIONS = 16
"""... with this many partitions, ..."""
TARGET_ITEM_TRANSACTIONS = 50.0
"""... within :data:`PARTITION_WCU` per partition key and with no item in more transactions a
second than this."""
CROWD = 100_000
"""The players whose hashes give the busiest key's share (``player-000001`` ...)."""


def busiest_share(keys: Iterable[str]) -> float:
    """The share of ``keys`` (one per player) that the most frequent one holds."""
    counts = Counter(keys)
    total = sum(counts.values())
    return max(counts.values()) / total if total else 0.0


@dataclass(frozen=True)
class Balance:
    """Among ``players`` players, on a board of N partitions, the share of them whose Score
    items the busiest of its N partition keys holds (``score_keys`` by N), and that the
    busiest of its 32·N count shards counts (``count_shards`` by N)."""

    players: int
    score_keys: Mapping[int, float]
    count_shards: Mapping[int, float]

    def document(self) -> dict[str, Any]:
        """The shares, as the JSON report holds them (times the even share: 1.0 is even)."""
        return {
            "players": self.players,
            "busiest_score_key_over_even": {
                str(n): round(s * n, 4) for n, s in self.score_keys.items()
            },
            "busiest_count_shard_over_even": {
                str(n): round(s * n * COUNT_SHARDS, 4) for n, s in self.count_shards.items()
            },
        }


def crowd_balance(partitions: Sequence[int], players: Sequence[str] | None = None) -> Balance:
    """The :class:`Balance` of ``players`` (by default :data:`CROWD` of the benchmark's
    players) on boards of each of ``partitions``, by the table layer's own choice of a
    player's Score partition and count shard."""
    ids = players if players is not None else [player_id(n) for n in range(1, CROWD + 1)]
    at = now()
    shares, shards = {}, {}
    for n in partitions:
        board = LeaderboardItem(
            leaderboard_id="balance",
            name="balance",
            period=Period.GLOBAL,
            partitions=n,
            created_at=at,
        )
        shares[n] = busiest_share(score_partition(board, p) for p in ids)
        shards[n] = busiest_share(" ".join(count_shard_key("balance", p, n)) for p in ids)
    return Balance(len(ids), shares, shards)


@dataclass(frozen=True)
class Figures:
    """One phase's figures at ``rate`` plays a second: write units a second on the board's
    own key and on its busiest Score key, the busiest of them, and the plays a second before
    it reaches :data:`PARTITION_WCU` (None: the phase writes nothing on the board's keys);
    the hottest item, its share of plays and its transactions a second, and the plays a
    second before it is in :data:`ITEM_TRANSACTIONS` (None: no item of the board is held by
    the plays of more than one player); the busiest index key's write units a second and the
    plays a second before it reaches :data:`PARTITION_WCU`."""

    rate: float
    board_key_wcu: float
    score_key_wcu: float
    busiest_key: str
    partition_bound: float | None
    hottest_item: str
    hottest_share: float
    conflict_bound: float | None
    index_key: str
    index_key_wcu: float
    index_bound: float | None

    @property
    def busiest_wcu(self) -> float:
        """Write units a second on the board's busiest partition key."""
        return max(self.board_key_wcu, self.score_key_wcu)

    @property
    def hottest_transactions(self) -> float:
        """Transactions a second the hottest item is in."""
        return self.rate * self.hottest_share

    @property
    def ceiling(self) -> float | None:
        """The plays a second the board takes: the lower of the two bounds (None: neither
        binds)."""
        bounds = [b for b in (self.partition_bound, self.conflict_bound) if b is not None]
        return min(bounds) if bounds else None

    @property
    def within_target(self) -> bool:
        """Whether no partition key of the board receives more than :data:`PARTITION_WCU` and
        no item is in more than :data:`TARGET_ITEM_TRANSACTIONS` transactions a second."""
        return (
            self.busiest_wcu <= PARTITION_WCU
            and self.hottest_transactions <= TARGET_ITEM_TRANSACTIONS
        )

    def document(self) -> dict[str, Any]:
        """The figures, as the JSON report holds them."""

        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 1)

        return {
            "plays_per_second": self.rate,
            "board_key_wcu_per_second": r(self.board_key_wcu),
            "busiest_score_key_wcu_per_second": r(self.score_key_wcu),
            "busiest_key": self.busiest_key,
            "partition_bound_plays_per_second": r(self.partition_bound),
            "hottest_item": self.hottest_item,
            "hottest_item_share_of_plays": round(self.hottest_share, 5),
            "hottest_item_transactions_per_second": r(self.hottest_transactions),
            "conflict_bound_plays_per_second": r(self.conflict_bound),
            "ceiling_plays_per_second": r(self.ceiling),
            "within_target": self.within_target,
            "busiest_index_key": self.index_key,
            "busiest_index_key_wcu_per_second": r(self.index_key_wcu),
            "index_bound_plays_per_second": r(self.index_bound),
        }


def _bound(per_play: float, limit: float) -> float | None:
    """The plays a second at which ``per_play`` (units or transactions a play) reaches
    ``limit`` a second; None when a play spends none."""
    return limit / per_play if per_play > 0 else None


def figures(run: PhaseRun, rate: float, balance: Balance) -> Figures:
    """The figures of ``run`` at ``rate`` plays a second."""
    board_key = run.per_play(run.board_key_wcu)
    score_key = run.per_play(run.score_keys_wcu) * balance.score_keys.get(run.partitions, 1.0)
    board_item = run.per_play(run.board_item_transactions)
    shard_share = balance.count_shards.get(run.partitions, 1.0)
    count_shard = run.per_play(run.count_shard_transactions) * shard_share
    if board_item == count_shard == 0:
        hottest, share = "none", 0.0
    elif board_item >= count_shard:
        hottest, share = "board item", board_item
    else:
        hottest, share = "count shard", count_shard
    index_key = run.per_play(run.busiest_index_wcu)
    return Figures(
        rate=rate,
        board_key_wcu=rate * board_key,
        score_key_wcu=rate * score_key,
        busiest_key="the board's own" if board_key >= score_key else "a Score key",
        partition_bound=_bound(max(board_key, score_key), PARTITION_WCU),
        hottest_item=hottest,
        hottest_share=share,
        conflict_bound=_bound(share, ITEM_TRANSACTIONS),
        index_key=run.busiest_index_key,
        index_key_wcu=rate * index_key,
        index_bound=_bound(index_key, PARTITION_WCU),
    )


def lowest(values: Sequence[float | None]) -> float | None:
    """The lowest of ``values`` that is not None (None when none is)."""
    bounded = [v for v in values if v is not None]
    return min(bounded) if bounded else None


def choosing_partitions(rows: Sequence[tuple[PhaseRun, Figures]]) -> list[dict[str, Any]]:
    """Per N of ``rows`` (each phase with its figures): the lowest ceiling of the operators in
    steady play and in first entries."""
    found = []
    for n in sorted({run.partitions for run, _ in rows}):
        of_n = [(run, f) for run, f in rows if run.partitions == n]
        found.append(
            {
                "partitions": n,
                "steady_plays_per_second": lowest(
                    [f.ceiling for run, f in of_n if run.phase == STEADY]
                ),
                "first_entries_per_second": lowest(
                    [f.ceiling for run, f in of_n if run.phase == FIRST_ENTRIES]
                ),
            }
        )
    return found


def target_verdict(rows: Sequence[tuple[PhaseRun, Figures]], rate: float) -> dict[str, Any]:
    """The target's verdict on ``rows`` (each phase with its figures at ``rate``): on
    :data:`TARGET_PARTITIONS` partitions, each operator and phase within the bounds or not;
    in steady play, the fewest partitions within them per operator; the count shards that
    would keep each within :data:`TARGET_ITEM_TRANSACTIONS` at ``rate`` first entries a
    second, and those a board of :data:`TARGET_PARTITIONS` has (32 per partition key)."""
    at_target = [(run, f) for run, f in rows if run.partitions == TARGET_PARTITIONS]
    fewest: dict[str, int | None] = {}
    for run, f in rows:
        if run.phase == STEADY and f.within_target:
            known = fewest.get(run.operator)
            fewest[run.operator] = run.partitions if known is None else min(known, run.partitions)
        else:
            fewest.setdefault(run.operator, None)
    return {
        "plays_per_second": rate,
        "partitions": TARGET_PARTITIONS,
        "partition_wcu": PARTITION_WCU,
        "item_transactions": TARGET_ITEM_TRANSACTIONS,
        "measured": bool(at_target),
        "met": bool(at_target) and all(f.within_target for _, f in at_target),
        "cases": [
            {
                "operator": run.operator,
                "phase": run.phase,
                "busiest_key_wcu_per_second": round(f.busiest_wcu, 1),
                "hottest_item": f.hottest_item,
                "hottest_item_transactions_per_second": round(f.hottest_transactions, 1),
                "within_target": f.within_target,
            }
            for run, f in at_target
        ],
        "fewest_partitions_in_steady_play": fewest,
        "count_shards_for_first_entries": math.ceil(rate / TARGET_ITEM_TRANSACTIONS),
        "count_shards_at_target": COUNT_SHARDS * TARGET_PARTITIONS,
    }
