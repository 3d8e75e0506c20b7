"""Keys as data: each entity's declaration builds its keys and items, recognises its stored
items, and is the table docs/explanation/table-design.md documents."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from docsgen import ROOT
from docsgen.examples import section
from dynamo.entry_guards import ENTRY_GUARD, guard_for
from dynamo.families import FAMILY
from dynamo.keys import Template
from dynamo.layout import ENTITIES, entity_of
from dynamo.leaderboards import (
    ENTRY_COUNT_SHARD,
    LEADERBOARD,
    PARTITIONED_ENTRY_COUNT_SHARD,
    LeaderboardItem,
    Period,
    SortOrder,
)
from dynamo.play_records import PLAY_RECORD
from dynamo.players import EMAIL_CLAIM, PLAYER, PlayerItem
from dynamo.scores import SCORE, SCORE_RANGE_END, ScoreItem, sort_values
from dynamo.sessions import SESSION

AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _as_documented(template: Template) -> str:
    """The template as the documentation writes it: ``PLAYER#<playerId>``."""
    return re.sub(r"\{(\w+)\}", lambda m: f"<{_camel(m.group(1))}>", template.text)


def test_the_declarations_are_the_documented_table() -> None:
    text = section((ROOT / "docs/explanation/table-design.md").read_text(), "## The table")
    table = text[text.index("| entity |") :].split("\n\n", 1)[0]
    rows = [
        [cell.strip().strip("`") for cell in line.strip("|").split("|")]
        for line in table.splitlines()[2:]
    ]
    documented = {
        re.sub(r" \(internal\)$", "", name): (
            pk,
            sk,
            *(i.replace("` / `", " / ") for i in (gsi1, gsi2)),
        )
        for name, pk, sk, gsi1, gsi2 in rows
    }

    def index(entity_index: tuple[Template, Template] | None) -> str:
        if entity_index is None:
            return ""
        return " / ".join(_as_documented(t) for t in entity_index)

    declared = {
        e.name: (
            _as_documented(e.pk),
            _as_documented(e.sk),
            index(e.indexes.get("GSI1")),
            index(e.indexes.get("GSI2")),
        )
        for e in ENTITIES
    }
    assert declared == documented


def test_a_player_item_has_all_its_keys_and_is_recognised() -> None:
    player = PlayerItem(
        player_id="ann", name="Ann", email="a#1@x.example", created_at=AT, updated_at=AT
    )
    item = PLAYER.item(player)
    assert {k: item[k] for k in ("pk", "sk", "gsi1pk", "gsi1sk")} == {
        "pk": "PLAYER#ann",
        "sk": "#METADATA",
        "gsi1pk": "PLAYER_EMAIL#a#1@x.example",
        "gsi1sk": "PLAYER#ann",
    }
    assert item["playerId"] == "ann"
    assert PLAYER.key(player_id="ann") == ("PLAYER#ann", "#METADATA")
    assert entity_of(item) is PLAYER
    claim = EMAIL_CLAIM.keys(email=player.email)
    assert entity_of(claim) is EMAIL_CLAIM
    assert EMAIL_CLAIM.pk.match(claim["pk"]) == {"email": "a#1@x.example"}


def test_a_score_and_its_guard_derive_their_sort_key_from_the_board() -> None:
    board = LeaderboardItem(
        leaderboard_id="laps",
        name="Laps",
        period=Period.GLOBAL,
        sort_order=SortOrder.ASC,
        score_width=5,
        created_at=AT,
    )
    entry = ScoreItem(leaderboard_id="laps", player_id="ann", score=4321, attained_at=AT)
    item = SCORE.item(entry, **sort_values(board, entry))
    millis = int(AT.timestamp() * 1000)
    sk = f"SCORE#95678#{9_999_999_999_999 - millis:013d}#ann"
    assert (item["pk"], item["sk"], item["gsi1pk"], item["gsi1sk"]) == (
        "LEADERBOARD#laps",
        sk,
        "PLAYER#ann",
        "SCORE#laps",
    )
    assert SCORE.sk.match(sk) == {
        "rank_value": "95678",
        "tie_value": f"{9_999_999_999_999 - millis:013d}",
        "player_id": "ann",
    }
    assert SCORE.sk.prefix < sk < SCORE_RANGE_END
    guard = guard_for(board, entry, version=3)
    assert (guard.score_sk, guard.version) == (sk, 3)
    guard_item = ENTRY_GUARD.item(guard)
    assert (guard_item["pk"], guard_item["sk"]) == ("PLAYER#ann", "ENTRY#laps")
    assert entity_of(item) is SCORE
    assert entity_of(guard_item) is ENTRY_GUARD
    assert entity_of(LEADERBOARD.item(board)) is LEADERBOARD


@pytest.mark.parametrize(
    ("key", "entity"),
    [
        (("PLAYER#p", "SESSION#01ARZ3NDEKTSV4RRFFQ69G5FAV"), SESSION),
        (("PLAYER#p", "SUBMISSION#0f8fad5b-d9cb-469f-a165-70867728950e"), PLAY_RECORD),
        (("FAMILY#arena", "#METADATA"), FAMILY),
        (("LEADERBOARD#b", "#COUNT#07"), ENTRY_COUNT_SHARD),
        (("LEADERBOARD#b#03", "#COUNT#07"), PARTITIONED_ENTRY_COUNT_SHARD),
        (("PLAYER#p", "ENTRY#arena.daily.2026-11-21"), ENTRY_GUARD),
        (("LEADERBOARD#b", "SCORE#0042"), None),  # a sort key missing its parts
        (("PLAYER#", "#METADATA"), None),  # an empty id
        (("BLOB#1", "#METADATA"), None),
        (("PLAYER#p", "#CLAIM"), None),
    ],
)
def test_each_stored_key_is_recognised_as_its_entity_or_none(
    key: tuple[str, str], entity: object
) -> None:
    assert entity_of({"pk": key[0], "sk": key[1]}) is entity


def test_the_partition_of_a_query_and_an_index_key() -> None:
    assert SESSION.pk.fill(player_id="p") == "PLAYER#p"
    assert SESSION.sk.prefix == "SESSION#"
    assert SESSION.index_key("GSI2", game_id="g", session_id="S") == ("GAME#g", "SESSION#S")
    assert SESSION.fields == ("player_id", "session_id", "game_id")
    with pytest.raises(KeyError):
        SESSION.key(player_id="p")
