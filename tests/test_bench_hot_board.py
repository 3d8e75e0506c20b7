"""The hot-board benchmark's pieces: how it classifies the proxy's conflicts, what it computes
from a phase's plays, its verdicts against the targets, and a tiny run of its cases through
the fault proxy (applying the conflict rule) and the real service on DynamoDB Local: the
plays each phase sends, the boards they enter, the conflicts counted, the boards' counts."""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from bench.core.stack import served_app
from bench.hot_board.cases import Case, cases, player_ids, seats
from bench.hot_board.clients import Outcome, PhaseStats, phase_stats
from bench.hot_board.conflicts import (
    COUNT_SHARDS,
    ConflictSummary,
    HotItem,
    ProxyCounts,
    kind_of,
    summarize,
)
from bench.hot_board.proxy import ThreadedProxy
from bench.hot_board.report import hot_board_markdown, targets
from bench.hot_board.results import CaseResult, HotBoardResult, PhaseResult
from bench.hot_board.run import HotOptions, Plan, measure_cases, prepare
from bench.hot_board.table import open_direct
from dynamo.leaderboards import (
    ENTRY_COUNT_SHARD,
    LEADERBOARD,
    PARTITIONED_ENTRY_COUNT_SHARD,
    read_board,
)
from dynamo.players import PLAYER
from dynamo.scores import SCORE
from faultproxy import ItemKey
from leaderboard.config import Settings
from tests.conftest import PATIENT

T = "t"
SHARD_A = ItemKey.of(T, **ENTRY_COUNT_SHARD.key_attributes(leaderboard_id="b", shard="03"))
SHARD_B = ItemKey.of(
    T,
    **PARTITIONED_ENTRY_COUNT_SHARD.key_attributes(leaderboard_id="b", partition="02", shard="17"),
)
"""A count shard of a write-sharded board, under one of its partitions."""
BOARD = ItemKey.of(T, **LEADERBOARD.key_attributes(leaderboard_id="b"))
ENTRY = ItemKey.of(
    T,
    **SCORE.key_attributes(
        leaderboard_id="b", rank_value="0000000010", tie_value="1", player_id="p"
    ),
)
PLAYER_ITEM = ItemKey.of(T, **PLAYER.key_attributes(player_id="p"))


def test_conflicts_are_classified_by_the_kind_of_item() -> None:
    assert [kind_of(k) for k in (SHARD_A, SHARD_B, BOARD, ENTRY, PLAYER_ITEM)] == [
        COUNT_SHARDS,
        COUNT_SHARDS,
        "Leaderboard",
        "Score",
        "Player",
    ]
    assert kind_of(ItemKey.of(T, pk="ELSEWHERE", sk="x")) == "unknown"
    counts = ProxyCounts(
        transactions=40,
        refused={"TransactWriteItems": 6, "PutItem": 1},
        conflicted={SHARD_A: 3, SHARD_B: 1, BOARD: 2, ENTRY: 1},
        held={SHARD_A: 9, BOARD: 30},
        committed={SHARD_A: 8, BOARD: 25},
        peak=7,
    )
    summary = summarize(counts, hottest=2)
    assert summary.transactions == 40
    assert summary.conflicts == 7
    assert summary.by_operation == {"PutItem": 1, "TransactWriteItems": 6}
    assert (summary.on_count_shards, summary.elsewhere) == (4, 3)
    assert summary.by_kind == {COUNT_SHARDS: 4, "Leaderboard": 2, "Score": 1}
    assert summary.count_shard_percent == 10.0
    assert summary.peak_in_flight == 7
    assert summary.hottest == [
        HotItem(str(SHARD_A), COUNT_SHARDS, 3, 9, 8),
        HotItem(str(BOARD), "Leaderboard", 2, 30, 25),
    ]
    nothing = summarize(ProxyCounts(0, {}, {}, {}, {}, 0))
    assert (nothing.conflicts, nothing.count_shard_percent, nothing.hottest) == (0, 0.0, [])


def test_a_phase_counts_its_plays_errors_and_the_players_each_board_entered() -> None:
    outcomes = [
        Outcome("a", 0.5, 40.0, None, ("x",)),
        Outcome("b", 1.0, 60.0, None, ("x",)),
        Outcome("a", 1.5, 20.0, None, ("x",)),
        Outcome("c", 1.8, 500.0, "SUBMISSION_CONFLICT"),
        Outcome("c", 2.0, 30.0, None, ("y",)),
        Outcome("d", 1.2, 10.0, "BACKEND_UNAVAILABLE"),
        Outcome("d", 1.9, 10.0, "BACKEND_UNAVAILABLE"),
    ]
    stats = phase_stats(outcomes)
    assert (stats.plays, stats.acknowledged, stats.seconds) == (7, 4, 2.0)
    assert stats.plays_per_second == 2.0
    assert stats.p50_ms == 35.0  # of the acknowledged plays alone
    assert stats.errors == {"BACKEND_UNAVAILABLE": 2, "SUBMISSION_CONFLICT": 1}
    assert stats.boards == ["x", "y"]
    assert stats.entered == {"x": 2, "y": 1}
    assert phase_stats([]).plays_per_second == 0.0


def test_the_cases_seat_each_player_with_one_client_and_spread_them_over_the_boards() -> None:
    assert [c.name for c in cases([1, 8], 16)] == [
        "16 boards, N = 1",
        "one board, N = 1",
        "one board, N = 8",
    ]
    assert [c.name for c in cases([8], 0)] == ["one board, N = 8"]
    players = player_ids(3, 4)
    seated = seats(players, 3, ["f0", "f1"])
    assert [p for seat in seated for p, _ in seat] == players
    assert [len(seat) for seat in seated] == [4, 4, 4]
    assert [f for seat in seated for _, f in seat] == ["f0", "f1"] * 6
    assert len(set(Case(16, 1).family_ids("abc"))) == 16


def _stats(acknowledged: int, rate: float, errors: dict[str, int] | None = None) -> PhaseStats:
    return PhaseStats(
        plays=acknowledged + sum((errors or {}).values()),
        acknowledged=acknowledged,
        seconds=acknowledged / rate,
        plays_per_second=rate,
        p50_ms=50.0,
        p99_ms=90.0,
        errors=errors or {},
        boards=["b"],
        entered={"b": acknowledged},
    )


def _summary(transactions: int, shards: int = 0, elsewhere: int = 0) -> ConflictSummary:
    return ConflictSummary(
        transactions=transactions,
        conflicts=shards + elsewhere,
        by_operation={"TransactWriteItems": shards + elsewhere} if shards + elsewhere else {},
        on_count_shards=shards,
        elsewhere=elsewhere,
        by_kind={},
        peak_in_flight=4,
    )


def _case(name: str, boards: int, rate: float, *, burst_shards: int = 0) -> CaseResult:
    return CaseResult(
        name=name,
        boards=boards,
        partitions=1,
        burst=PhaseResult("burst", _stats(100, 20.0), _summary(100 + burst_shards, burst_shards)),
        steady=PhaseResult("steady", _stats(600, rate), _summary(600)),
        entry_counts={"b": 100},
        entered={"b": 100},
    )


def _line(lines: list[str], text: str) -> str:
    """The one line that holds ``text``."""
    (found,) = [line for line in lines if text in line]
    return found


def test_the_targets_are_judged_on_what_was_measured() -> None:
    spread = _case("16 boards, N = 1", 16, 50.0)
    good = _case("one board, N = 8", 1, 46.0, burst_shards=4)
    lines = targets([spread, good])
    assert len(lines) == 8
    assert all(": met" in line for line in lines), lines
    assert _line(lines, "Burst of first entries, one board, N = 8").startswith(
        "- Burst of first entries, one board, N = 8: 4 conflicts on count shards in 104"
        " transactions (3.85 per 100): met"
    )
    assert "92% of the 50.0 of 16 boards, N = 1: met" in _line(lines, "46.0 plays/s")

    slow = _case("one board, N = 1", 1, 44.0, burst_shards=6)
    lines = targets([spread, slow])
    assert "6 conflicts on count shards in 106 transactions (5.66 per 100): NOT met" in _line(
        lines, "Burst of first entries, one board"
    )
    assert "88% of the 50.0 of 16 boards, N = 1: NOT met" in _line(lines, "44.0 plays/s")

    failed = replace(
        good,
        steady=PhaseResult(
            "steady",
            _stats(600, 46.0, {"SUBMISSION_CONFLICT": 2}),
            _summary(700, elsewhere=3),
        ),
        entry_counts={"b": 99},
    )
    lines = targets([spread, failed])
    assert _line(lines, "SUBMISSION_CONFLICT").startswith(
        "- `SUBMISSION_CONFLICT` in any phase of any case: 2: NOT met"
    )
    assert _line(lines, "Steady state, one board").endswith(
        "3 conflicts between plays of distinct players: NOT met (target: none once every"
        " player has an entry)"
    )
    assert _line(lines, "One board, N = 8: every board").endswith(
        "(100): NOT met (entryCount {'b': 99})"
    )
    assert _line(targets([good]), "against the same load spread") == (
        "- One board, N = 8 against the same load spread: not measured in this run"
    )


@pytest.mark.slow
async def test_a_tiny_run_plays_every_case_through_the_conflict_rule(
    dynamodb_endpoint: str, settings: Settings, tmp_path: Path
) -> None:
    options = HotOptions(
        clients=4,
        players=3,
        partitions=(1, 4),
        boards=2,
        duration=0.2,
        prewarm=0.0,
        hold=0.010,
        seed=3,
        out=tmp_path,
    )
    plan = Plan.of(options, uuid.uuid4().hex[:6])
    notes: list[str] = []
    with ThreadedProxy(dynamodb_endpoint, hold=options.hold) as proxy:
        async with (
            served_app(proxy.url, settings.table, limits=PATIENT) as served,
            open_direct(dynamodb_endpoint, settings.table) as db,
        ):
            await prepare(db, plan)
            results = await measure_cases(
                served.url, proxy, db, plan, seconds=0.2, prewarm=0.0, seed=3, notes=notes
            )
            boards = [await read_board(db, board) for result in results for board in result.entered]
    partitions = {b.leaderboard_id: b.partitions for b in boards if b is not None}
    assert notes == []
    assert [r.name for r in results] == ["2 boards, N = 1", "one board, N = 1", "one board, N = 4"]
    for (case, families), result in zip(plan.cases, results, strict=True):
        burst, steady = result.burst, result.steady
        # The burst: every player's first play, each acknowledged, each a transaction of its
        # own (and one more for each the rule refused, retried unseen).
        assert (burst.plays.plays, burst.plays.acknowledged, burst.plays.errors) == (12, 12, {})
        refused = burst.conflicts.by_operation.get("TransactWriteItems", 0)
        assert burst.conflicts.transactions == 12 + refused
        assert burst.conflicts.elsewhere == 0
        # The steady state: each client played at least once, every play acknowledged, and
        # no conflict between distinct players.
        assert steady.plays.plays >= 4
        assert steady.plays.acknowledged == steady.plays.plays
        assert steady.conflicts.conflicts == 0
        assert steady.conflicts.transactions == steady.plays.plays
        # Each family's board of the day, created by its first plays, counts its players.
        assert len(result.entered) == case.boards
        assert all(
            board.startswith(f"{family}.daily.")
            for board, family in zip(result.entered, families, strict=True)
        )
        assert sorted(result.entered.values()) == [12 // case.boards] * case.boards
        assert result.counts_exact
        assert {partitions[board] for board in result.entered} == {case.partitions}

    document = HotBoardResult({}, options.settings(), results, 1.0).document()
    assert document["cases"][2]["burst"]["conflicts"]["count_shard_percent"] == round(
        results[2].burst.conflicts.count_shard_percent, 3
    )
    markdown = hot_board_markdown(
        HotBoardResult(
            {
                "cpu_count": 2,
                "platform": "p",
                "python": "3",
                "implementation": "c",
                "dynamodb_local": "v",
                "dynamodb_local_package": "d",
            },
            options.settings(),
            results,
            1.0,
        )
    )
    assert "| one board, N = 4 | 12 | 12 |" in markdown
