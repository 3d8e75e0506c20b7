"""The key grammar of the table (``tests/key_grammar.py``), which the fuzz tests check every
item of the table against: well-formed items of every kind pass, malformed ones are caught."""

from __future__ import annotations

import pytest

from tests.key_grammar import key_violation

SESSION_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


@pytest.mark.parametrize(
    ("item", "valid"),
    [
        (
            {
                "pk": "PLAYER#p",
                "sk": "#METADATA",
                "gsi1pk": "PLAYER_EMAIL#p@x.example",
                "gsi1sk": "PLAYER#p",
            },
            True,
        ),
        (
            {
                "pk": "LEADERBOARD#b",
                "sk": "SCORE#0042#9999999999999#p",
                "gsi1pk": "PLAYER#p",
                "gsi1sk": "SCORE#b",
            },
            True,
        ),
        (
            {
                "pk": "PLAYER#p",
                "sk": f"SESSION#{SESSION_ID}",
                "gsi2pk": "GAME#g",
                "gsi2sk": f"SESSION#{SESSION_ID}",
            },
            True,
        ),
        ({"pk": "PLAYER#p", "sk": "SUBMISSION#0f8fad5b-d9cb-469f-a165-70867728950e"}, True),
        ({"pk": "PLAYER_EMAIL#p@x.example", "sk": "#CLAIM"}, True),
        ({"pk": "FAMILY#f", "sk": "#METADATA"}, True),
        ({"pk": "PLAYER#p", "sk": "ENTRY#f.daily.2026-11-21"}, True),
        (
            {
                "pk": "PLAYER#a#b",
                "sk": "#METADATA",
                "gsi1pk": "PLAYER_EMAIL#p@x.example",
                "gsi1sk": "PLAYER#a#b",
            },
            False,
        ),
        (
            {
                "pk": "PLAYER#p",
                "sk": "#METADATA",
                "gsi1pk": "PLAYER_EMAIL#P@x.example",
                "gsi1sk": "PLAYER#p",
            },
            False,
        ),
        ({"pk": "PLAYER_EMAIL#p @x.example", "sk": "#CLAIM"}, False),
        ({"pk": "PLAYER_EMAIL#\ud800@x.example", "sk": "#CLAIM"}, False),
        (
            {
                "pk": "LEADERBOARD#b",
                "sk": "SCORE#42#123#p",
                "gsi1pk": "PLAYER#p",
                "gsi1sk": "SCORE#b",
            },
            False,
        ),
        (
            {
                "pk": "LEADERBOARD#b",
                "sk": "SCORE#\u0664\u0662#9999999999999#p",
                "gsi1pk": "PLAYER#p",
                "gsi1sk": "SCORE#b",
            },
            False,
        ),
        (
            {
                "pk": "LEADERBOARD#b",
                "sk": "SCORE#42#9999999999999#p",
                "gsi1pk": "PLAYER#q",
                "gsi1sk": "SCORE#b",
            },
            False,
        ),
        (
            {
                "pk": "PLAYER#p",
                "sk": f"SESSION#{SESSION_ID.lower()}",
                "gsi2pk": "GAME#g",
                "gsi2sk": f"SESSION#{SESSION_ID.lower()}",
            },
            False,
        ),
        ({"pk": "PLAYER#p", "sk": f"SESSION#{SESSION_ID}"}, False),
        ({"pk": "PLAYER#p", "sk": "SUBMISSION#0F8FAD5B-D9CB-469F-A165-70867728950E"}, False),
        ({"pk": "LEADERBOARD#b", "sk": "#METADATA", "gsi1pk": ""}, False),
        ({"pk": "LEADERBOARD#" + "b" * 65, "sk": "#METADATA"}, False),
    ],
)
def test_key_grammar(item: dict[str, str], valid: bool) -> None:
    assert (key_violation(item) is None) is valid, key_violation(item)
