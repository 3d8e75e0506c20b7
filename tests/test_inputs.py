"""Client input is checked where its GraphQL names are known; dynamo/ speaks of subjects."""

from __future__ import annotations

import ast
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dynamo.emails import normalize_email
from dynamo.errors import ErrorCode, LeaderboardError, Subject
from resolvers.inputs import (
    FieldError,
    check_board_shape,
    clean_email,
    clean_id,
    clean_id_list,
    clean_instant,
    clean_submission_id,
    naming,
    page_size,
)
from resolvers.plays import PlayArguments, clean_play

ROOT = Path(__file__).resolve().parent.parent
_MANY = tuple(f"b{n}" for n in range(21))


@pytest.mark.parametrize("bad", ["", "a#b", "a b", "x" * 65, "é", "a/b", "a\n"])
def test_ids_outside_the_key_grammar_are_refused_at_their_field(bad: str) -> None:
    with pytest.raises(FieldError) as raised:
        clean_id(bad, "playerId")
    assert (raised.value.code, raised.value.field) == (ErrorCode.INVALID_ID, "playerId")
    assert raised.value.message.startswith("playerId must be 1-64 characters")


def test_valid_values_come_back_cleaned() -> None:
    assert clean_id("Season_3.daily-01", "id") == "Season_3.daily-01"
    assert clean_email("  Ann@Example.COM ") == "ann@example.com"
    assert clean_submission_id("01j0000000000000000000000a") == "01J0000000000000000000000A"
    assert clean_id_list(["a", "b", "a"], "ids") == ["a", "b"]
    assert clean_instant(datetime(2026, 1, 1), "at") == datetime(2026, 1, 1, tzinfo=UTC)
    assert page_size(None) == 20


def test_each_refusal_names_its_field() -> None:
    cases: list[tuple[Callable[[], object], ErrorCode, str]] = [
        (lambda: clean_email("nope", "email"), ErrorCode.INVALID_EMAIL, "email"),
        (lambda: clean_id_list(["a"] * 101, "ids"), ErrorCode.INVALID_ARGUMENT, "ids"),
        (lambda: page_size(101), ErrorCode.INVALID_ARGUMENT, "first"),
        (lambda: check_board_shape(16), ErrorCode.INVALID_ARGUMENT, "scoreWidth"),
        (
            lambda: check_board_shape(3, datetime(2026, 2, 1), datetime(2026, 1, 1)),
            ErrorCode.INVALID_ARGUMENT,
            "endsAt",
        ),
        (lambda: clean_instant(datetime(3000, 1, 1), "at"), ErrorCode.INVALID_ARGUMENT, "at"),
    ]
    for call, code, field in cases:
        with pytest.raises(FieldError) as raised:
            call()
        assert (raised.value.code, raised.value.field) == (code, field)


def test_the_domain_error_of_an_address_has_a_subject_and_no_field() -> None:
    with pytest.raises(LeaderboardError) as raised:
        normalize_email("nope")
    assert not isinstance(raised.value, FieldError)
    assert raised.value.subject is Subject.EMAIL


def test_naming_turns_a_subject_into_the_operations_field() -> None:
    with pytest.raises(FieldError) as raised, naming({Subject.PLAYER: "playerId"}):
        raise LeaderboardError(ErrorCode.PLAYER_NOT_FOUND, "no player 'x'", Subject.PLAYER)
    assert (raised.value.field, raised.value.message) == ("playerId", "no player 'x'")
    # Errors about another subject, or about none, pass unchanged.
    other = LeaderboardError(ErrorCode.LEADERBOARD_NOT_FOUND, "gone", Subject.LEADERBOARD)
    with pytest.raises(LeaderboardError) as passed, naming({Subject.PLAYER: "playerId"}):
        raise other
    assert passed.value is other


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (PlayArguments("p", "g", 1), "leaderboardId"),
        (PlayArguments("p", "g", 1, leaderboard_id="a b"), "leaderboardId"),
        (PlayArguments("p", "g", 1, leaderboard_ids=("ok", "a b")), "leaderboardIds"),
        (PlayArguments("p", "g", 1, family_ids=("a#b",)), "familyIds"),
        (PlayArguments("p", "g", -1, leaderboard_id="b"), "score"),
        (PlayArguments("p", "g", 1, leaderboard_id="b", duration_sec=-1), "durationSec"),
        (PlayArguments("p", "g", 1, leaderboard_id="b", submission_id="x"), "submissionId"),
        (
            PlayArguments("p", "g", 1, leaderboard_ids=tuple(map(str, range(21)))),
            "leaderboardIds",
        ),
        (PlayArguments("p", "g", 1, family_ids=tuple(map(str, range(21)))), "leaderboardId"),
    ],
)
def test_a_play_is_refused_at_the_field_at_fault(args: PlayArguments, field: str) -> None:
    with pytest.raises(FieldError) as raised:
        clean_play(args)
    assert raised.value.field == field


def test_a_valid_play_is_cleaned_once() -> None:
    play = clean_play(PlayArguments("p", "g", 5, leaderboard_id="a", leaderboard_ids=("a", "b")))
    assert play.leaderboard_ids == ("a", "b")


def test_dynamo_raises_no_error_with_a_graphql_field() -> None:
    """Every LeaderboardError built in dynamo/ has a Subject (or nothing) as its third
    argument, never a string: the field names belong to the API layer."""
    for path in sorted((ROOT / "dynamo").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "LeaderboardError"
            ):
                extra = node.args[2:] + [k.value for k in node.keywords]
                for arg in extra:
                    assert not isinstance(arg, ast.Constant), f"{path.name}:{node.lineno}"
