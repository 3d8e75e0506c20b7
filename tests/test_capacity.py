"""The capacity benchmark's numbers: DynamoDB's size and unit rules, and the units the service's
own operations spend, measured against the real DynamoDB Local and redis-server, so that the
README's capacity table cannot drift from the code unnoticed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bench.capacity.cost import mix_cost
from bench.capacity.hot import PARTITION_WCU
from bench.capacity.probe import Measured
from bench.capacity.recorder import RecordedCall, RecordedRead, RecordedWrite
from bench.capacity.run import Plan, Results, measure_size
from bench.capacity.sizes import item_size, number_size, read_units, write_units
from bench.capacity.units import call_units

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = 120
TEST_PLAN = Plan(
    sizes=(ENTRIES,),
    operations_size=ENTRIES,
    mix_requests=0,
    hot_rate=10.0,
    hot_seconds=0.5,
    hot_players=20,
)


def _s(text: str) -> dict[str, str]:
    return {"S": text}


# -- the rules -----------------------------------------------------------------------------


def test_an_item_counts_its_attribute_names_and_values() -> None:
    item: dict[str, dict[str, Any]] = {
        "pk": _s("PLAYER#p1"),
        "score": {"N": "1500"},
        "ok": {"BOOL": True},
    }
    # "pk" + 9 bytes, "score" + 2 digits (1, 5) -> 2 bytes, "ok" + 1.
    assert item_size(item) == 2 + 9 + 5 + 2 + 2 + 1


def test_a_number_costs_one_byte_per_two_significant_digits_plus_one() -> None:
    assert number_size("0") == 2
    assert number_size("12345") == 4
    assert number_size("1000000") == 2
    assert number_size("-0.00125") == 3


def test_read_units_round_up_to_4_kb_and_halve_when_eventually_consistent() -> None:
    assert read_units(0) == 0.5
    assert read_units(4096) == 0.5
    assert read_units(4097) == 1.0
    assert read_units(4097, consistent=True) == 2.0
    assert read_units(100, transactional=True) == 2.0


def test_write_units_round_up_to_1_kb_and_double_in_a_transaction() -> None:
    assert write_units(1) == 1.0
    assert write_units(1025) == 2.0
    assert write_units(1025, transactional=True) == 4.0


def test_an_index_key_change_bills_the_old_index_entry_and_the_new_one() -> None:
    before = {"pk": _s("A"), "sk": _s("1"), "gsi1pk": _s("x"), "gsi1sk": _s("old")}
    after = {**before, "gsi1sk": _s("new")}
    call = RecordedCall(
        "PutItem", writes=[RecordedWrite("Put", ("A", "1"), before, after, transactional=False)]
    )
    units = call_units(call)
    assert (units.write, units.index_write) == (1.0, 2.0)


def test_a_missing_key_of_a_batch_read_is_billed_one_unit() -> None:
    call = RecordedCall(
        "BatchGetItem",
        reads=[RecordedRead("P", [{"pk": _s("P"), "sk": _s("1")}], True, True, missing=2)],
    )
    assert call_units(call).read == 3.0


def test_the_cost_of_a_million_requests_follows_the_on_demand_prices() -> None:
    cost = mix_cost(read_units=8.0, write_units=1.6)
    assert cost["on_demand"] == {"read": 1.0, "write": 1.0, "total": 2.0}


# -- the service's operations ---------------------------------------------------------------


def _by_name(rows: list[Measured]) -> dict[str, Measured]:
    return {m.name: m for m in rows}


@pytest.fixture(scope="module")
def measured_run(dynamodb_endpoint: str, redis_url: str) -> Results:
    """The operations measured once on a board of ENTRIES players (no mix; 5 plays a board)."""
    results = Results()
    asyncio.run(measure_size(dynamodb_endpoint, redis_url, ENTRIES, TEST_PLAN, results))
    return results


def test_a_page_of_100_with_names_reads_a_query_page_and_a_unit_per_player(
    measured_run: Results,
) -> None:
    page = _by_name(measured_run.operations)["top 100 with player names"]
    assert page.calls == {"Query": 2, "BatchGetItem": 1}
    # The board with its count (one Query of under 4 KB: 0.5), 100 Score items in one Query
    # page of 20-24 KB (6 x 0.5), and 100 players read one by one (100 x 0.5).
    assert page.read == 0.5 + 3.0 + 50.0
    assert (page.write, page.index_write) == (0.0, 0.0)
    assert page.reported == page.read


def test_plays_on_a_best_board_write_the_board_partition_only_as_their_entry_changes(
    measured_run: Results,
) -> None:
    rows = _by_name(measured_run.operations)
    first = rows["play on a BEST board: first entry"]
    better = rows["play on a BEST board: improvement"]
    same = rows["play on a BEST board: no improvement"]
    # First entry: the player's count shard and the new Score item, 2 WCU each in the
    # transaction; an improvement: the old Score item deleted and the new one put; no
    # improvement: nothing on the board's partition (its item is in no transaction).
    assert (first.board_write, better.board_write, same.board_write) == (4.0, 4.0, 0.0)
    # Session, player, play record, count shard, guard and Score item (2 WCU each); the
    # session (GSI2), the player and the Score item (GSI1) in the indexes.
    assert (first.write, first.index_write) == (12.0, 6.0)
    # Session, player, play record, guard, old and new Score item; without the change, the
    # guard's ConditionCheck instead of the last three.
    assert (better.write, same.write) == (12.0, 8.0)
    assert first.calls == {"BatchGetItem": 1, "Query": 1, "TransactWriteItems": 1}


def test_a_rank_from_the_index_costs_no_units_and_by_count_reads_the_board(
    measured_run: Results,
) -> None:
    ranks = _by_name(measured_run.ranks)
    assert ranks[f"rank from the rank index, {ENTRIES} entries"].computed == 0.0
    assert ranks[f"rank by COUNT, {ENTRIES} entries"].read >= 1.0


def test_the_hot_board_writes_at_most_4_wcu_per_play_on_its_partition(
    measured_run: Results,
) -> None:
    assert [h.operator for h in measured_run.hot] == ["BEST", "LATEST", "INCREMENT"]
    for hot in measured_run.hot:
        assert hot.plays == 5
        assert hot.failed_plays == 0
        assert hot.hottest_partition == f"LEADERBOARD#hot-{hot.operator.lower()}"
        # 4 for a first entry (count shard, Score item) or a change (old and new Score
        # item), 0 for a play that leaves the entry as it was; never the board's item.
        assert 0.0 < hot.board_wcu_per_play <= 4.0
        assert set(hot.board_wcu_per_play_by_item) <= {"Score items", "count shards"}
        assert hot.ceiling_plays_per_second == PARTITION_WCU / hot.board_wcu_per_play


def test_the_committed_results_hold_the_units_the_code_spends_now(measured_run: Results) -> None:
    """The README's capacity table comes from bench/results/capacity.json: the operations whose
    units do not depend on the board's size must cost there what they cost here."""
    committed = {
        row["name"]: row
        for row in json.loads((ROOT / "bench" / "results" / "capacity.json").read_text())[
            "operations"
        ]
    }
    for m in measured_run.operations:
        if m.name.startswith("profile page"):
            continue  # its COUNT ranks read more on a larger board
        row = committed[m.name]
        assert (row["read_units"], row["write_units"], row["index_write_units"]) == (
            m.read,
            m.write,
            m.index_write,
        ), m.name
        assert row["board_partition_write_units"] == m.board_write, m.name
