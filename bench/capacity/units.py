"""The request units of recorded DynamoDB requests, by DynamoDB's billing rules
(:mod:`bench.core.sizes`), per request and per partition key.

A write bills each item it touches at the larger of its sizes before and after, in 1 KB units
(a ConditionCheck at the size of the item it checks); each global secondary index the item is
in bills a write of its own: one when the item enters or leaves the index or changes in it, two
when its index key changes (the old entry deleted, the new one put). In a transaction every
unit counts twice, in the indexes too, as DynamoDB Local reports them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench.capacity.recorder import INDEX_KEYS, Item, RecordedCall, RecordedRead, RecordedWrite
from bench.core.sizes import item_size, read_units, write_units

__all__ = ["CallUnits", "Tally", "call_units", "index_writes", "read_of", "tally"]


def read_of(read: RecordedRead) -> float:
    """The read units of one read."""
    if read.per_item:
        billed = [item_size(i) for i in read.items] + [0] * read.missing
        return sum(
            read_units(s, consistent=read.consistent, transactional=read.transactional)
            for s in billed
        )
    return read_units(sum(item_size(i) for i in read.items), consistent=read.consistent)


def _index_key(item: Item | None, index: str) -> tuple[str, str] | None:
    pk, sk = INDEX_KEYS[index]
    if item is None or pk not in item or sk not in item:
        return None
    return (str(item[pk]["S"]), str(item[sk]["S"]))


def index_writes(write: RecordedWrite) -> list[tuple[str, str, float]]:
    """The index writes of one written item: (index, the index's partition key, units) each."""
    if write.action == "ConditionCheck":
        return []
    found: list[tuple[str, str, float]] = []
    for index in INDEX_KEYS:
        old, new = _index_key(write.before, index), _index_key(write.after, index)
        if old is not None and new is not None and old == new:
            sized = [(new, item_size(write.after))]
        else:
            sized = [(k, item_size(i)) for k, i in ((old, write.before), (new, write.after)) if k]
        found += [
            (index, key[0], write_units(size, transactional=write.transactional))
            for key, size in sized
        ]
    return found


def table_write(write: RecordedWrite) -> float:
    """The base table's write units of one written item."""
    if write.action == "ConditionCheck":
        size = item_size(write.before)
    else:
        size = max(item_size(write.before), item_size(write.after))
    return write_units(size, transactional=write.transactional)


@dataclass
class CallUnits:
    """The units of one request or of many: reads, base-table writes and index writes, the same
    per partition key, and what DynamoDB Local reported for them."""

    calls: dict[str, int] = field(default_factory=dict)
    read: float = 0.0
    write: float = 0.0
    index_write: float = 0.0
    read_by_partition: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    write_by_partition: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    index_write_by_index: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    reported: float = 0.0
    unreported_calls: int = 0

    @property
    def computed(self) -> float:
        """Every unit computed: reads, table writes and index writes."""
        return self.read + self.write + self.index_write

    def add(self, other: CallUnits) -> None:
        """Add ``other``'s calls and units to these."""
        for name, n in other.calls.items():
            self.calls[name] = self.calls.get(name, 0) + n
        self.read += other.read
        self.write += other.write
        self.index_write += other.index_write
        for mine, theirs in (
            (self.read_by_partition, other.read_by_partition),
            (self.write_by_partition, other.write_by_partition),
            (self.index_write_by_index, other.index_write_by_index),
        ):
            for key, units in theirs.items():
                mine[key] += units
        self.reported += other.reported
        self.unreported_calls += other.unreported_calls


def call_units(call: RecordedCall) -> CallUnits:
    """The units of one recorded request."""
    units = CallUnits(calls={call.operation: 1})
    for read in call.reads:
        billed = read_of(read)
        units.read += billed
        units.read_by_partition[read.partition] += billed
    for write in call.writes:
        billed = table_write(write)
        units.write += billed
        units.write_by_partition[write.key[0]] += billed
        for index, _, n in index_writes(write):
            units.index_write += n
            units.index_write_by_index[index] += n
    units.reported = call.reported_table + sum(call.reported_indexes.values())
    units.unreported_calls = 0 if call.reported else 1
    return units


@dataclass
class Tally:
    """The units of a sequence of requests, in total."""

    total: CallUnits = field(default_factory=CallUnits)
    failed_calls: int = 0


def tally(calls: Iterable[RecordedCall]) -> Tally:
    """The summed units of ``calls``."""
    result = Tally()
    for call in calls:
        result.total.add(call_units(call))
        result.failed_calls += call.error is not None
    return result
