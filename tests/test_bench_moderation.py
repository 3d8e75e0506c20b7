"""The moderation benchmark's pure parts: its command line's sizes, the items it loads, the
items a call writes, a size's summary and the report's tables."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

import pytest

from bench.moderation.calls import written_items
from bench.moderation.cli import sizes
from bench.moderation.data import (
    BANNED_ID,
    ERASED_ID,
    ERASURE_BOARDS,
    OTHER_ID,
    PLAY_RECORDS,
    ban_table,
    board_ids,
    erasure_table,
)
from bench.moderation.measure import Trial, holding
from bench.moderation.report import (
    BAN,
    ERASURE,
    ban_table_markdown,
    erasure_table_markdown,
    summarise,
)
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.leaderboards import LEADERBOARD
from dynamo.play_records import PLAY_RECORD
from dynamo.players import EMAIL_CLAIM, PLAYER
from dynamo.scores import SCORE
from dynamo.sessions import SESSION

AT = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def _trial(ms: float, *, deletes: int = 10, queries: int = 1) -> Trial:
    return Trial(
        loaded_items=100,
        load_seconds=0.5,
        ms=ms,
        calls={"GetItem": 1, "Query": queries, "TransactWriteItems": 2},
        call_ms={"GetItem": 1.0, "Query": 2.0, "TransactWriteItems": ms / 2},
        written={"put": 3, "update": 4, "delete": deletes},
    )


# -- the command line ----------------------------------------------------------------------


def test_sizes_are_comma_separated_positive_integers() -> None:
    assert sizes("10,100,300") == (10, 100, 300)
    assert sizes("5000") == (5000,)
    for text in ("10,,300", "ten", "10,0", "-5"):
        with pytest.raises(argparse.ArgumentTypeError):
            sizes(text)


# -- the tables loaded ---------------------------------------------------------------------


def test_the_ban_table_holds_both_players_on_every_board() -> None:
    table = ban_table(30, AT)
    assert table.player_id == BANNED_ID
    assert table.boards == board_ids(30)
    boards = [i for i in table.items if LEADERBOARD.holds(i)]
    assert [b["entryCount"] for b in boards] == [2] * 30
    for player in (BANNED_ID, OTHER_ID):
        scores = [i for i in table.items if SCORE.holds(i) and i["playerId"] == player]
        guards = [i for i in table.items if ENTRY_GUARD.holds(i) and i["playerId"] == player]
        assert sorted(i["leaderboardId"] for i in scores) == table.boards
        assert sorted(i["leaderboardId"] for i in guards) == table.boards
    assert len(table.items) == 30 + 2 * (3 + 2 * 30)
    assert len({(i["pk"], i["sk"]) for i in table.items}) == len(table.items)


def test_the_erasure_table_spreads_the_sessions_over_the_boards() -> None:
    table = erasure_table(120, AT)
    mine = holding(table.items, ERASED_ID)
    assert len(mine) == table.player_items == 2 + 120 + PLAY_RECORDS + 2 * ERASURE_BOARDS
    kinds = {
        name: [i for i in mine if entity.holds(i)]
        for name, entity in (
            ("player", PLAYER),
            ("claim", EMAIL_CLAIM),
            ("session", SESSION),
            ("record", PLAY_RECORD),
            ("guard", ENTRY_GUARD),
            ("score", SCORE),
        )
    }
    assert {name: len(found) for name, found in kinds.items()} == {
        "player": 1,
        "claim": 1,
        "session": 120,
        "record": PLAY_RECORDS,
        "guard": ERASURE_BOARDS,
        "score": ERASURE_BOARDS,
    }
    assert {s["leaderboardId"] for s in kinds["session"]} == set(table.boards)
    sessions = {s["sessionId"] for s in kinds["session"]}
    assert {g["sessionId"] for g in kinds["guard"]} <= sessions
    assert {r["sessionId"] for r in kinds["record"]} <= sessions
    assert kinds["player"][0]["gamesPlayed"] == 120
    others = [i for i in table.items if SCORE.holds(i) and i["playerId"] == OTHER_ID]
    assert len(others) == ERASURE_BOARDS
    assert len({(i["pk"], i["sk"]) for i in table.items}) == len(table.items)


def test_an_erasure_table_needs_a_session_per_board() -> None:
    with pytest.raises(ValueError, match="cannot cover"):
        erasure_table(ERASURE_BOARDS - 1, AT)


def test_holding_finds_a_value_in_keys_lists_and_nested_maps_ignoring_case() -> None:
    items: list[dict[str, Any]] = [
        PLAYER.key_attributes(player_id="Erased-Player"),
        {"pk": "X", "sk": "Y", "entries": [{"by": "erased-player@bench.example"}]},
        {"pk": "X", "sk": "Z", "playerId": "other-player"},
    ]
    assert holding(items, ERASED_ID) == items[:2]


# -- items written -------------------------------------------------------------------------


def test_a_transaction_writes_its_puts_updates_and_deletes_but_not_its_checks() -> None:
    params: dict[str, Any] = {
        "TransactItems": [
            {"Put": {}},
            {"Delete": {}},
            {"Delete": {}},
            {"Update": {}},
            {"ConditionCheck": {}},
        ]
    }
    assert written_items("TransactWriteItems", params) == {"put": 1, "delete": 2, "update": 1}


def test_a_batch_write_writes_each_request_of_each_table() -> None:
    params: dict[str, Any] = {
        "RequestItems": {
            "a": [{"DeleteRequest": {}}, {"DeleteRequest": {}}],
            "b": [{"PutRequest": {}}],
        }
    }
    assert written_items("BatchWriteItem", params) == {"delete": 2, "put": 1}


def test_single_writes_write_one_item_and_reads_none() -> None:
    assert written_items("UpdateItem", {}) == {"update": 1}
    assert written_items("DeleteItem", {}) == {"delete": 1}
    assert written_items("PutItem", {}) == {"put": 1}
    assert written_items("Query", {"TransactItems": [{"Put": {}}]}) == {}


# -- the summary and the report ------------------------------------------------------------


def test_a_summary_takes_the_median_and_range_and_the_first_trials_counts() -> None:
    result = summarise(ERASURE, 1000, [_trial(300.0), _trial(100.0), _trial(200.0)])
    assert (result.median_ms, result.min_ms, result.max_ms) == (200.0, 100.0, 300.0)
    assert result.written == 17
    assert result.deleted == 10
    assert result.items_per_second == 50.0
    assert result.calls_vary is False
    assert result.call_ms["TransactWriteItems"] == 100.0
    assert len(result.trials) == 3


def test_a_summary_says_when_the_trials_made_different_calls() -> None:
    assert summarise(BAN, 10, [_trial(1.0), _trial(2.0, queries=2)]).calls_vary is True
    assert summarise(BAN, 10, [_trial(1.0), _trial(2.0, deletes=9)]).calls_vary is True
    with pytest.raises(ValueError, match="no trials"):
        summarise(BAN, 10, [])


def test_each_table_lists_its_own_operation() -> None:
    results = [
        summarise(BAN, 300, [_trial(1234.0)]),
        summarise(ERASURE, 5000, [_trial(2000.0, deletes=5212)]),
    ]
    x = "\N{MULTIPLICATION SIGN}"
    assert ban_table_markdown(results).splitlines()[2:] == [
        f"| 300 | 1,234 (1,234-1,234) | 4: GetItem+Query+TransactWriteItems{x}2 |"
        " TransactWriteItems 617, Query 2, GetItem 1 | 17 |"
    ]
    assert erasure_table_markdown(results).splitlines()[2:] == [
        f"| 5,000 | 2,000 (2,000-2,000) | 4: GetItem+Query+TransactWriteItems{x}2 |"
        " TransactWriteItems 1,000, Query 2, GetItem 1 | 5,212 | 2,606 |"
    ]
