"""The JSON the service writes to clients and reads from DynamoDB: orjson where it writes and
reads what the standard library does, the standard library wherever the two could differ."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dynamo.direct import decode_answer
from edge.cached_answers import EncodedData, encode_json, encode_response


def _standard(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("ascii")


_FLOATS = st.floats(allow_nan=False, allow_infinity=False)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | _FLOATS
    | st.text()
    | st.sampled_from(["e-mail", "1e-7", "0.00001", "\ud800", "é", "\u2028", "\x00"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(_VALUES)
def test_answers_are_written_as_the_standard_library_writes_them(value: Any) -> None:
    assert encode_json(value) == _standard(value)


@pytest.mark.parametrize(
    "value",
    [
        1e-05,
        -7.865704305545454e-07,
        1e-09,
        9.99e-05,
        1e16,
        5e-324,
        1.7976931348623157e308,
        -0.0,
        2**64,
        -(2**63) - 1,
        {1: "a", None: "b"},
        {
            "deep": [
                [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
            ]
        },
        ["\ud83c\udfc6 first", "caf\u00e9"],
        ("a", 1),
    ],
)
def test_values_where_orjson_writes_otherwise_are_the_standard_librarys(value: Any) -> None:
    assert encode_json(value) == _standard(value)


def test_nesting_past_orjsons_limit_is_still_written() -> None:
    value: Any = 1
    for _ in range(300):
        value = [value]
    assert encode_json(value) == _standard(value)


@pytest.mark.parametrize("value", [{1, 2}, object(), EncodedData(b"{}")])
def test_what_json_cannot_write_still_fails(value: object) -> None:
    with pytest.raises(TypeError):
        encode_json({"data": value})


def test_a_cached_answer_is_spliced_in_as_it_is() -> None:
    response = {"data": EncodedData(b'{"a":1e-05}'), "extensions": {"cost": 1e-05, "n": "é"}}
    assert encode_response(response) == (
        b'{"data":{"a":1e-05},"extensions":' + _standard(response["extensions"]) + b"}"
    )


_ATTRIBUTES = st.recursive(
    st.builds(lambda s: {"S": s}, st.text())
    | st.builds(lambda n: {"N": str(n)}, st.integers() | st.decimals(allow_nan=False))
    | st.builds(lambda b: {"BOOL": b}, st.booleans())
    | st.just({"NULL": True}),
    lambda inner: (
        st.builds(lambda m: {"M": m}, st.dictionaries(st.text(max_size=8), inner))
        | st.builds(lambda m: {"L": m}, st.lists(inner, max_size=4))
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.dictionaries(st.text(max_size=12), _ATTRIBUTES, max_size=6), max_size=5),
    st.integers(min_value=0, max_value=2**63 - 1),
    _FLOATS,
    st.booleans(),
)
def test_answers_are_read_as_the_standard_library_reads_them(
    items: list[dict[str, Any]], count: int, units: float, ascii_only: bool
) -> None:
    answer = {"Items": items, "Count": count, "ConsumedCapacity": {"CapacityUnits": units}}
    text = json.dumps(answer, ensure_ascii=ascii_only)
    assume(ascii_only or text.isascii() or not any("\ud800" <= c <= "\udfff" for c in text))
    body = text.encode("utf-8")
    assert decode_answer(body) == json.loads(body)


def test_an_escaped_lone_surrogate_is_read_as_the_standard_library_reads_it() -> None:
    assert decode_answer(b'{"S":"\\ud800","Count":3}') == {"S": "\ud800", "Count": 3}


@pytest.mark.parametrize("body", [b"", b"{", b'{"Items": [}', b"\xff"])
def test_what_is_not_json_is_a_value_error(body: bytes) -> None:
    with pytest.raises((json.JSONDecodeError, UnicodeDecodeError)):
        decode_answer(body)
