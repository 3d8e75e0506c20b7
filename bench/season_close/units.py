"""The request units DynamoDB reports for a client's calls, and the steps of a close they fall
in.

:class:`ConsumedUnits` hooks a client's events: every call that can return its consumed
capacity is sent with ``ReturnConsumedCapacity=INDEXES``, and the answers' reports are summed,
read units apart from write units and the table's writes apart from its indexes' (DynamoDB
Local reports them for every single-item, batch and query operation). A call answered with an
error (a conditional update whose condition failed) reports nothing and is counted apart: on
AWS such a write still consumes the units of the item it checked.

:class:`StepClock` watches the same client's answers for the board's own item as the close
reads it (it reads the board again after each step it records), and marks the moment its
``closePhase`` first reads otherwise, with the units consumed until then.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dynamo.closing import Phase
from dynamo.leaderboards import LEADERBOARD

__all__ = ["READ_OPERATIONS", "ConsumedUnits", "StepClock", "Units"]

READ_OPERATIONS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"})


@dataclass
class Units:
    """Calls by operation and the units their answers reported."""

    calls: dict[str, int] = field(default_factory=dict)
    read: float = 0.0
    """Read units, the table's and its indexes'."""
    write: float = 0.0
    """The table's write units."""
    index_write: float = 0.0
    """The global secondary indexes' write units."""
    failed: int = 0
    """Calls answered with an error, which report no units."""

    def copy(self) -> Units:
        return Units(dict(self.calls), self.read, self.write, self.index_write, self.failed)

    def since(self, before: Units) -> Units:
        """What was consumed after ``before`` (an earlier copy of the same count)."""
        calls = {
            name: n - before.calls.get(name, 0)
            for name, n in self.calls.items()
            if n - before.calls.get(name, 0)
        }
        return Units(
            calls,
            round(self.read - before.read, 1),
            round(self.write - before.write, 1),
            round(self.index_write - before.index_write, 1),
            self.failed - before.failed,
        )


class ConsumedUnits:
    """Sums the consumed capacity reported for every call ``client`` sends (see the module)."""

    def __init__(self, client: Any) -> None:
        self.units = Units()
        self._calls: Counter[str] = Counter()
        events = client.meta.events
        events.register("provide-client-params.dynamodb", self._ask)
        events.register("after-call.dynamodb", self._count)

    def snapshot(self) -> Units:
        """A copy of the sums so far."""
        return self.units.copy()

    @staticmethod
    def _ask(params: dict[str, Any], model: Any, **_: Any) -> None:
        if "ReturnConsumedCapacity" in model.input_shape.members:
            params["ReturnConsumedCapacity"] = "INDEXES"

    def _count(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        name = str(model.name)
        self.units.calls[name] = self.units.calls.get(name, 0) + 1
        if parsed.get("Error"):
            self.units.failed += 1
            return
        consumed = parsed.get("ConsumedCapacity")
        reports = consumed if isinstance(consumed, list) else [consumed] if consumed else []
        for report in reports:
            table = report.get("Table")
            on_table = float(table["CapacityUnits"] if table else report.get("CapacityUnits", 0))
            on_indexes = sum(
                float(units["CapacityUnits"])
                for units in (report.get("GlobalSecondaryIndexes") or {}).values()
            )
            if name in READ_OPERATIONS:
                self.units.read += on_table + on_indexes
            else:
                self.units.write += on_table
                self.units.index_write += on_indexes


OPEN = "OPEN"
"""The step of a board whose close has not begun."""


@dataclass(frozen=True)
class Mark:
    """The moment the board's item first read as in ``step``, and the units consumed by
    then."""

    step: str
    at: float
    units: Units


class StepClock:
    """Marks each step the board ``leaderboard_id`` is first read in through ``client``
    (a Query or GetItem answer holding its item), with ``consumed``'s units by then; register
    it after ``consumed``, so that the units of the read that shows a step count before it."""

    def __init__(self, client: Any, leaderboard_id: str, consumed: ConsumedUnits) -> None:
        self.marks: list[Mark] = []
        self._key = LEADERBOARD.key(leaderboard_id=leaderboard_id)
        self._consumed = consumed
        client.meta.events.register("after-call.dynamodb", self._watch)

    def _watch(self, parsed: dict[str, Any], **_: Any) -> None:
        items = list(parsed.get("Items") or [])
        if parsed.get("Item"):
            items.append(parsed["Item"])
        for item in items:
            if (item.get("pk", {}).get("S"), item.get("sk", {}).get("S")) != self._key:
                continue
            step = _step_of(item)
            if not self.marks or self.marks[-1].step != step:
                self.marks.append(Mark(step, time.perf_counter(), self._consumed.snapshot()))


def _step_of(item: dict[str, Any]) -> str:
    if "closedAt" in item:
        return Phase.FINAL.value
    if "closePhase" in item:
        return str(item["closePhase"]["S"])
    return OPEN
