"""The capacity benchmark's numbers: DynamoDB's size and unit rules, and the units the service's
own operations spend, measured against the real DynamoDB Local and redis-server, so that the
capacity tables of docs/explanation/capacity.md cannot drift from the code unnoticed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bench.capacity.ceiling import (
    TARGET_RATE,
    Balance,
    busiest_share,
    crowd_balance,
    figures,
)
from bench.capacity.cost import mix_cost
from bench.capacity.hot import PARTITION_WCU
from bench.capacity.probe import Measured
from bench.capacity.recorder import RecordedCall, RecordedRead, RecordedWrite
from bench.capacity.run import Plan, Results, measure_size
from bench.capacity.sharded import FIRST_ENTRIES, GAME, STEADY, PhaseRun, sharded_board_id
from bench.capacity.sharded_report import sharded_document
from bench.capacity.units import call_units
from bench.core.sizes import item_size, number_size, read_units, write_units
from bench.core.workload import player_id
from dynamo.items import now
from dynamo.leaderboards import (
    LeaderboardItem,
    Operator,
    Period,
    count_shard,
    player_partition,
)
from dynamo.scores import score_partition
from dynamo.sessions import SESSION
from dynamo.table import GSI2

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = 120
TEST_PLAN = Plan(
    sizes=(ENTRIES,),
    operations_size=ENTRIES,
    mix_requests=0,
    hot_rate=10.0,
    hot_seconds=0.5,
    hot_players=20,
    partitions=(1, 4),
    sharded_players=12,
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


# -- a write-sharded board's figures --------------------------------------------------------

EVEN = Balance(
    players=0,
    score_keys={1: 1.0, 16: 1 / 16, 64: 1 / 64},
    count_shards={1: 1 / 32, 16: 1 / 512, 64: 1 / 2048},
)
"""Every key and count shard holding exactly its even share of the players: 32 count shards
under each of the N keys."""


def _run(
    partitions: int,
    phase: str,
    *,
    board_key: float = 0.0,
    score_keys: float = 0.0,
    count_shard: int = 0,
    board_item: int = 0,
    operator: str = "LATEST",
) -> PhaseRun:
    """100 plays writing these totals: 2 WCU each on the game's index key."""
    return PhaseRun(
        operator=operator,
        partitions=partitions,
        phase=phase,
        plays=100,
        failed_plays=0,
        failed_calls=0,
        first_entries=100 if phase == FIRST_ENTRIES else 0,
        changed=100,
        board_key_wcu=board_key,
        score_keys_wcu=score_keys,
        score_keys_written=partitions,
        player_wcu=600.0,
        other_wcu=0.0,
        busiest_index_key="GSI2 game",
        busiest_index_wcu=200.0,
        board_item_transactions=board_item,
        count_shard_transactions=count_shard,
    )


def test_first_entries_on_one_partition_are_bound_by_the_boards_key() -> None:
    # Every play a first entry: 2 WCU for its Score item and 2 for its count shard, both on
    # the board's own key; a count shard (1 of 32) held.
    burst = _run(1, FIRST_ENTRIES, board_key=400.0, count_shard=100)
    f = figures(burst, TARGET_RATE, EVEN)
    assert (f.board_key_wcu, f.score_key_wcu) == (40_000.0, 0.0)
    assert f.busiest_key == "the board's own"
    assert f.partition_bound == 250.0
    assert (f.hottest_item, f.hottest_transactions) == ("count shard", 312.5)
    assert f.conflict_bound == 3_200.0
    assert f.ceiling == 250.0


def test_first_entries_on_n_partitions_spread_over_its_n_keys_and_32_n_shards() -> None:
    # Every play a first entry: 2 WCU for its Score item and 2 for its count shard, both on
    # its player's Score key; nothing on the board's own key; a count shard (1 of 32·N) held.
    on_16 = figures(_run(16, FIRST_ENTRIES, score_keys=400.0, count_shard=100), TARGET_RATE, EVEN)
    assert (on_16.board_key_wcu, on_16.score_key_wcu, on_16.busiest_wcu) == (0.0, 2_500.0, 2_500.0)
    assert on_16.busiest_key == "a Score key"
    assert on_16.partition_bound == 4_000.0
    assert (on_16.hottest_item, on_16.hottest_transactions) == ("count shard", 19.53125)
    assert on_16.conflict_bound == 51_200.0
    assert on_16.ceiling == 4_000.0
    assert not on_16.within_target  # 2,500 WCU/s on the busiest key
    on_64 = figures(_run(64, FIRST_ENTRIES, score_keys=400.0, count_shard=100), TARGET_RATE, EVEN)
    assert (on_64.score_key_wcu, on_64.hottest_transactions) == (625.0, 4.8828125)
    assert on_64.ceiling == 16_000.0
    assert on_64.within_target


def test_steady_changes_spread_over_the_score_keys_and_hold_no_shared_item() -> None:
    # Every play a change of entry: its old Score item deleted and the new one put, 4 WCU on
    # the player's Score key; nothing on the board's own key.
    on_16 = figures(_run(16, STEADY, score_keys=400.0), TARGET_RATE, EVEN)
    assert (on_16.board_key_wcu, on_16.score_key_wcu) == (0.0, 2_500.0)
    assert on_16.busiest_key == "a Score key"
    assert (on_16.partition_bound, on_16.ceiling) == (4_000.0, 4_000.0)
    assert (on_16.hottest_item, on_16.hottest_transactions, on_16.conflict_bound) == (
        "none",
        0.0,
        None,
    )
    assert not on_16.within_target
    on_64 = figures(_run(64, STEADY, score_keys=400.0), TARGET_RATE, EVEN)
    assert (on_64.score_key_wcu, on_64.ceiling) == (625.0, 16_000.0)
    assert on_64.within_target


def test_an_item_every_play_holds_bounds_a_board_at_100_plays_a_second() -> None:
    held = figures(_run(1, STEADY, board_key=400.0, board_item=100), TARGET_RATE, EVEN)
    assert (held.hottest_item, held.hottest_transactions) == ("board item", 10_000.0)
    assert held.conflict_bound == 100.0
    assert held.partition_bound == 250.0
    assert held.ceiling == 100.0


def test_a_phase_that_writes_nothing_on_the_board_has_no_ceiling_of_its_own() -> None:
    quiet = figures(_run(16, STEADY), TARGET_RATE, EVEN)
    assert (quiet.partition_bound, quiet.conflict_bound, quiet.ceiling) == (None, None, None)
    assert quiet.within_target
    # The game's index key still takes 2 WCU a play: 500 plays/s of the game.
    assert (quiet.index_key_wcu, quiet.index_bound) == (20_000.0, 500.0)


def test_the_busiest_key_share_is_its_players_over_all_players() -> None:
    assert busiest_share(["a", "b", "a", "c"]) == 0.5
    assert busiest_share([]) == 0.0
    board = LeaderboardItem(
        leaderboard_id="b", name="b", period=Period.GLOBAL, partitions=4, created_at=now()
    )
    by_key: dict[str, list[str]] = {}
    for n in range(1, 400):
        by_key.setdefault(score_partition(board, player_id(n)), []).append(player_id(n))
    even = [p for ids in by_key.values() for p in ids[:3]]
    assert len(even) == 12
    assert crowd_balance([4], even).score_keys == {4: 0.25}
    one_shard = [
        player_id(n)
        for n in range(1, 20_000)
        if (player_partition(player_id(n), 4), count_shard(player_id(n), 4)) == ("02", "07")
    ]
    assert crowd_balance([4], one_shard[:10]) == Balance(10, {4: 1.0}, {4: 1.0})


def test_the_target_verdict_names_the_fewest_partitions_and_the_shards_first_entries_need() -> None:
    runs = [
        _run(16, FIRST_ENTRIES, score_keys=400.0, count_shard=100),
        _run(16, STEADY, score_keys=400.0),
        _run(64, FIRST_ENTRIES, score_keys=400.0, count_shard=100),
        _run(64, STEADY, score_keys=400.0),
    ]
    doc = sharded_document(runs, [], EVEN, rate=TARGET_RATE)
    target = doc["target"]
    assert (target["measured"], target["met"]) == (True, False)
    assert [(c["phase"], c["within_target"]) for c in target["cases"]] == [
        (FIRST_ENTRIES, False),
        (STEADY, False),
    ]
    assert target["fewest_partitions_in_steady_play"] == {"LATEST": 64}
    # 10,000 first entries a second at 50 transactions a second per count shard; N = 16 has
    # 32 under each of its keys.
    assert target["count_shards_for_first_entries"] == 200
    assert target["count_shards_at_target"] == 512
    # First entries are bound by the Score keys, as steady changes are: N times one key.
    assert doc["choosing_partitions"] == [
        {"partitions": 16, "steady_plays_per_second": 4_000.0, "first_entries_per_second": 4_000.0},
        {
            "partitions": 64,
            "steady_plays_per_second": 16_000.0,
            "first_entries_per_second": 16_000.0,
        },
    ]


# -- the service's operations ---------------------------------------------------------------


def _by_name(rows: list[Measured]) -> dict[str, Measured]:
    return {m.name: m for m in rows}


@pytest.fixture(scope="module")
def measured_run(dynamodb_endpoint: str, redis_url: str) -> Results:
    """The operations measured once on a board of ENTRIES players (no mix; 5 plays a board)."""
    results = Results()
    asyncio.run(measure_size(dynamodb_endpoint, redis_url, ENTRIES, TEST_PLAN, results))
    return results


def test_a_page_of_100_with_names_reads_the_board_and_a_query_page_of_entries(
    measured_run: Results,
) -> None:
    page = _by_name(measured_run.operations)["top 100 with player names"]
    assert page.calls == {"Query": 2}
    # The board with its count (one Query of under 4 KB: 0.5) and 100 Score items, each with
    # its player's name, in one Query page of 24-28 KB (7 x 0.5): no player is read.
    assert page.read == 0.5 + 3.5
    assert page.read <= 5.0
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
    """The table of units per operation (docs/explanation/capacity.md) comes from
    bench/results/capacity.json: the operations whose units do not depend on the board's size
    must cost there what they cost here."""
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


# -- write-sharded boards, measured ---------------------------------------------------------


def _sharded(run: Results, operator: Operator, partitions: int, phase: str) -> PhaseRun:
    (found,) = [
        r
        for r in run.sharded
        if (r.operator, r.partitions, r.phase) == (operator.value, partitions, phase)
    ]
    return found


def test_every_operator_and_partitions_is_played_in_both_phases(measured_run: Results) -> None:
    assert [(r.operator, r.partitions, r.phase) for r in measured_run.sharded] == [
        (op.value, n, phase)
        for op in Operator
        for n in TEST_PLAN.partitions
        for phase in (FIRST_ENTRIES, STEADY)
    ]
    for run in measured_run.sharded:
        assert (run.plays, run.failed_plays) == (TEST_PLAN.sharded_players, 0)
        # No play holds the board's item; every write is on the board's or a player's keys.
        assert run.board_item_transactions == 0
        assert run.other_wcu == 0.0


def test_a_first_entry_writes_its_count_shard_beside_its_score_on_one_key_of_the_board(
    measured_run: Results,
) -> None:
    crowd = [player_id(n) for n in range(1, TEST_PLAN.sharded_players + 1)]
    for operator in Operator:
        one = _sharded(measured_run, operator, 1, FIRST_ENTRIES)
        four = _sharded(measured_run, operator, 4, FIRST_ENTRIES)
        for run in (one, four):
            assert run.first_entries == run.changed == run.plays
            # Every first entry holds its player's count shard (2 WCU in the transaction),
            # and writes one partition key of the board.
            assert run.count_shard_transactions == run.plays
            assert run.board_keys_per_transaction == 1
            # Session, player and entry guard on the player's key, 2 WCU each.
            assert run.per_play(run.player_wcu) == 6.0
            # The Session's entry under its game, in the index every play of a game writes.
            assert run.busiest_index_key == f"{GSI2} {SESSION.indexes[GSI2][0].fill(game_id=GAME)}"
            assert run.per_play(run.busiest_index_wcu) == 2.0
            assert set(run.shared_items) <= {"count shards"}
        # One partition: the Score item and the count shard on the board's own key; four:
        # both on the player's Score key, nothing on the board's own.
        assert one.per_play(one.board_key_wcu_by_item["count shards"]) == 2.0
        assert (one.per_play(one.board_key_wcu), one.per_play(one.score_keys_wcu)) == (4.0, 0.0)
        assert four.per_play(four.score_keys_wcu_by_item["count shards"]) == 2.0
        assert (four.per_play(four.board_key_wcu), four.per_play(four.score_keys_wcu)) == (0.0, 4.0)
        board = LeaderboardItem(
            leaderboard_id=sharded_board_id(operator, 4),
            name="",
            period=Period.GLOBAL,
            partitions=4,
            created_at=now(),
        )
        assert four.score_keys_written == len({score_partition(board, p) for p in crowd})


def test_a_steady_play_writes_only_its_players_keys_and_the_change_of_its_entry(
    measured_run: Results,
) -> None:
    for operator in Operator:
        for n in TEST_PLAN.partitions:
            run = _sharded(measured_run, operator, n, STEADY)
            assert run.first_entries == 0
            assert run.count_shard_transactions == 0
            assert run.board_keys_per_transaction <= 1
            assert run.shared_items == {}
            # 4 WCU a change of entry (the old Score item deleted, the new one put), none for
            # an entry that stays.
            assert run.board_key_wcu + run.score_keys_wcu == 4.0 * run.changed
            assert (run.board_key_wcu if n > 1 else run.score_keys_wcu) == 0.0
    # A LATEST play always replaces its entry.
    latest = _sharded(measured_run, Operator.LATEST, 4, STEADY)
    assert latest.changed == latest.plays
    f = figures(latest, TARGET_RATE, measured_run.balance or EVEN)
    assert f.score_key_wcu == TARGET_RATE * 4.0 * (measured_run.balance or EVEN).score_keys[4]
    assert f.hottest_item == "none"


def test_the_top_100_on_n_partitions_reads_the_board_and_n_queries(
    measured_run: Results,
) -> None:
    assert [p.partitions for p in measured_run.top_pages] == list(TEST_PLAN.partitions)
    for page in measured_run.top_pages:
        n = page.partitions
        assert page.calls == {"Query": n + 1}
        # The board's item alone (no count shards), under 4 KB: 0.5; the names come with the
        # entries: no player is read.
        assert (page.board_read, page.names_read) == (0.5, 0.0)
        assert page.score_read >= 0.5 * n
    # One partition: 101 Score items with their players' names in one Query page of 24 to
    # 32 KB (by the ids' and names' lengths).
    assert measured_run.top_pages[0].score_read in (3.5, 4.0)


def test_the_committed_results_hold_the_sharded_units_the_code_spends_now(
    measured_run: Results,
) -> None:
    """The table of N (docs/explanation/capacity.md) comes from bench/results/capacity.json:
    what a first entry writes on each key, and the calls of a top-100 page, must be there what
    they are here."""
    committed = json.loads((ROOT / "bench" / "results" / "capacity.json").read_text())[
        "write_sharded_boards"
    ]
    rows = {(r["operator"], r["partitions"], r["phase"]): r for r in committed["phases"]}
    for run in measured_run.sharded:
        if run.phase != FIRST_ENTRIES:
            continue  # a steady play's changes follow the scores drawn
        per_play = rows[(run.operator, run.partitions, run.phase)]["wcu_per_play"]
        assert (
            per_play["board_key"],
            per_play["score_keys"],
            per_play["players_keys"],
            per_play["busiest_index_key"],
        ) == (
            run.per_play(run.board_key_wcu),
            run.per_play(run.score_keys_wcu),
            run.per_play(run.player_wcu),
            run.per_play(run.busiest_index_wcu),
        )
    pages = {p["partitions"]: p for p in committed["top_100_by_partitions"]}
    for page in measured_run.top_pages:
        assert pages[page.partitions]["calls"] == page.calls
        assert pages[page.partitions]["read_units_names"] == page.names_read
