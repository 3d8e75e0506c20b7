"""Key codecs and cursors, without a table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from boto3.dynamodb.types import Binary

from dynamo.cursors import CursorCodec, CursorShape
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.items import deserialize
from dynamo.leaderboards import LEADERBOARD, SortOrder
from dynamo.players import PLAYER
from dynamo.scores import SCORE, rank_value, tie_value


def test_rank_value_pads_and_orders_like_numbers() -> None:
    values = [0, 7, 95, 100, 1500, 9_999_999_999]
    encoded = [rank_value(v, 10, SortOrder.DESC) for v in values]
    assert encoded[2:4] == ["0000000095", "0000000100"]
    assert sorted(encoded) == encoded
    assert {len(e) for e in encoded} == {10}


def test_rank_value_inverts_for_ascending_boards() -> None:
    assert rank_value(0, 5, SortOrder.ASC) == "99999"
    assert rank_value(99_999, 5, SortOrder.ASC) == "00000"
    times = [58_250, 59_000, 61_500]
    encoded = [rank_value(t, 7, SortOrder.ASC) for t in times]
    assert sorted(encoded, reverse=True) == encoded  # faster = larger = better


def test_tie_value_sorts_earlier_attainment_higher() -> None:
    t = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    earlier, later = tie_value(t), tie_value(t + timedelta(milliseconds=1))
    assert earlier > later
    assert len(earlier) == 13
    assert int(earlier) == 9_999_999_999_999 - int(t.timestamp() * 1000)


BOARD = SCORE.pk.fill(leaderboard_id="b")
SHAPE = CursorShape(exact={"pk": BOARD}, prefixes={"sk": SCORE.sk.prefix})


def test_cursor_round_trip_and_rejections() -> None:
    codec = CursorCodec(b"0123456789abcdef")
    key = SCORE.key_attributes(
        leaderboard_id="b", rank_value="0000000001", tie_value="1", player_id="p"
    )
    cursor = codec.encode(key)
    assert codec.decode(cursor, SHAPE) == key
    other_secret = CursorCodec(b"fedcba9876543210")
    wrong_board = codec.encode({**key, "pk": SCORE.pk.fill(leaderboard_id="b2")})
    wrong_range = codec.encode(LEADERBOARD.key_attributes(leaderboard_id="b"))
    extra = codec.encode({**key, "gsi1pk": PLAYER.pk.fill(player_id="p")})
    for bad, reader in [
        (cursor, other_secret),
        (wrong_board, codec),
        (wrong_range, codec),
        (extra, codec),
        ("x" * 2000, codec),
        ("!!!.???", codec),
    ]:
        with pytest.raises(LeaderboardError) as raised:
            reader.decode(bad, SHAPE)
        assert raised.value.code is ErrorCode.INVALID_CURSOR


def test_deserialize_reads_every_attribute_type_as_boto3_does_with_exact_integers() -> None:
    item = {
        "s": {"S": "text"},
        "int": {"N": "999999999999999"},
        "float": {"N": "1.5"},
        "exponent": {"N": "1E+2"},
        "flag": {"BOOL": False},
        "none": {"NULL": True},
        "map": {"M": {"list": {"L": [{"N": "7"}, {"S": "x"}, {"M": {}}]}}},
        "strings": {"SS": ["a", "b"]},
        "bytes": {"B": b"\x00\xff"},
    }
    plain = deserialize(item)
    assert plain == {
        "s": "text",
        "int": 999_999_999_999_999,
        "float": Decimal("1.5"),
        "exponent": 100,
        "flag": False,
        "none": None,
        "map": {"list": [7, "x", {}]},
        "strings": {"a", "b"},
        "bytes": Binary(b"\x00\xff"),
    }
    assert (type(plain["int"]), type(plain["exponent"])) == (int, int)
