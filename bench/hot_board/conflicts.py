"""What the fault proxy's conflict rule did over one phase, and on which items: each
conflicting item recognised by the table's key declarations (:func:`dynamo.layout.entity_of`)
as a count shard, a board's item, a Score item, a player's item, ...

:func:`counts_of` copies the rule's counters (they go on counting); :func:`summarize` turns a
copy into the phase's figures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from dynamo.layout import entity_of
from dynamo.leaderboards import ENTRY_COUNT_SHARD, PARTITIONED_ENTRY_COUNT_SHARD
from faultproxy import FaultProxy, ItemKey

__all__ = [
    "COUNT_SHARDS",
    "TRANSACT_WRITE",
    "ConflictSummary",
    "HotItem",
    "ProxyCounts",
    "counts_of",
    "kind_of",
    "summarize",
]

TRANSACT_WRITE = "TransactWriteItems"
COUNT_SHARDS = "count shards"
"""The kind of a board's count shards, the one kind of item plays of distinct players share."""
HOTTEST = 5
"""The most conflicted items a phase lists."""


@dataclass(frozen=True)
class ProxyCounts:
    """A copy of what the proxy counted since its counts were last reset."""

    transactions: int
    """TransactWriteItems that reached the proxy (admitted or refused)."""
    refused: dict[str, int]
    """Requests the conflict rule refused, per operation."""
    conflicted: dict[ItemKey, int]
    """Per item: how many refused requests it was a conflicting item of."""
    held: dict[ItemKey, int]
    committed: dict[ItemKey, int]
    peak: int
    """The most TransactWriteItems in flight at once."""


def counts_of(proxy: FaultProxy) -> ProxyCounts:
    """Copy ``proxy``'s counts (its conflict rule must be on)."""
    rule = proxy.conflicts
    if rule is None:
        raise RuntimeError("the proxy does not apply the conflict rule")
    return ProxyCounts(
        transactions=proxy.received[TRANSACT_WRITE],
        refused=dict(rule.conflicts),
        conflicted=dict(rule.conflicted),
        held=dict(rule.held),
        committed=dict(rule.committed),
        peak=rule.peak,
    )


def kind_of(item: ItemKey) -> str:
    """What an item is: :data:`COUNT_SHARDS` (under a board's own key or a write-sharded
    board's partition), else its entity's name (``Score``, ``Leaderboard``, ``Player``, ...),
    ``unknown`` for a key of none."""
    entity = entity_of(dict(item.key))
    if entity is ENTRY_COUNT_SHARD or entity is PARTITIONED_ENTRY_COUNT_SHARD:
        return COUNT_SHARDS
    return entity.name if entity is not None else "unknown"


@dataclass(frozen=True)
class HotItem:
    """One of the most conflicted items: its key, its kind, the refusals it caused, and how
    many transactions held it and committed."""

    item: str
    kind: str
    conflicts: int
    held: int
    committed: int


@dataclass(frozen=True)
class ConflictSummary:
    """The conflict rule over one phase."""

    transactions: int
    """TransactWriteItems sent (a play's first attempt, and each retry after a refusal)."""
    conflicts: int
    """Requests refused for a conflict, every operation."""
    by_operation: dict[str, int]
    on_count_shards: int
    """Conflicts on count shards (a refused request counted once per conflicting item)."""
    elsewhere: int
    """Conflicts on every other item."""
    by_kind: dict[str, int]
    """Conflicts per kind of item, most first."""
    peak_in_flight: int
    hottest: list[HotItem] = field(default_factory=list)

    @property
    def count_shard_percent(self) -> float:
        """Conflicts on count shards per hundred transactions sent (0 with none sent)."""
        return 100.0 * self.on_count_shards / self.transactions if self.transactions else 0.0


def summarize(counts: ProxyCounts, hottest: int = HOTTEST) -> ConflictSummary:
    """The phase's figures from the proxy's counts: conflicts per kind of item, and the
    ``hottest`` most conflicted items."""
    kinds: Counter[str] = Counter()
    for item, n in counts.conflicted.items():
        kinds[kind_of(item)] += n
    top = Counter(counts.conflicted).most_common(hottest)
    return ConflictSummary(
        transactions=counts.transactions,
        conflicts=sum(counts.refused.values()),
        by_operation=dict(sorted(counts.refused.items())),
        on_count_shards=kinds[COUNT_SHARDS],
        elsewhere=sum(n for kind, n in kinds.items() if kind != COUNT_SHARDS),
        by_kind=dict(kinds.most_common()),
        peak_in_flight=counts.peak,
        hottest=[
            HotItem(
                item=str(item),
                kind=kind_of(item),
                conflicts=n,
                held=counts.held.get(item, 0),
                committed=counts.committed.get(item, 0),
            )
            for item, n in top
        ],
    )
