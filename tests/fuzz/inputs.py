"""Hypothesis strategies for the values the fuzz tests send: nasty text, edge integers and
floats, any JSON, datetimes, emails, time zones, ids (of the ``world`` table's players, boards
and families, or any valid id), ``wild`` versions of a valid strategy, and the ``fuzz`` settings
every fuzz test runs with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import available_timezones

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from dynamo.leaderboards import LEADERBOARD
from dynamo.players import PLAYER
from dynamo.scores import SCORE
from dynamo.sessions import SESSION


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


NASTY = [
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\x00",
    "a\x00b",
    "\x7f",
    "\x1b[31m",
    "\u0085",
    "\u00a0",
    "\u2028",
    "\u200b",
    "\u200e",
    "\u200f",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\ufffd",
    "\uffff",
    "\U0001f600",
    "\U0010ffff",
    "\ud800",
    "\udfff",
    "a\udc00b",
    "\udc00\ud800",
    "\u0130",
    "\u212a",
    "\u00df",
    "\ufb00",
    "\uff46\uff55\uff4c\uff4c",
    "a#b",
    "#",
    PLAYER.pk.fill(player_id="x"),
    LEADERBOARD.pk.fill(leaderboard_id="fz-best"),
    SCORE.sk.fill(rank_value="9", tie_value="9", player_id="x"),
    PLAYER.sk.text,
    SESSION.sk.fill(session_id="01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    "$",
    "x$",
    ".",
    "..",
    "-",
    "_",
    "../../etc/passwd",
    "%00",
    "%23",
    "null",
    "undefined",
    "true",
    "0",
    "-1",
    "NaN",
    "'",
    '"',
    "\\",
    "\\u0000",
    "{}",
    "[]",
    "${x}",
    "<script>alert(1)</script>",
    "a" * 64,
    "a" * 65,
    "a" * 1000,
    "\u00e9" * 100,
    "\u00e9" * 101,
    "x" * 100_000,
]
NASTY_CHARS = [c for c in NASTY if len(c) == 1] + ["\udbff\udfff"]


def _insert(parts: tuple[str, str, int]) -> str:
    text, char, at = parts
    at %= len(text) + 1
    return text[:at] + char + text[at:]


valid_ids = st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True)
odd_chars = st.characters(categories=["Cc", "Cf", "Cs", "Zs", "Zl", "Zp", "Mn", "Co"])
texts: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=40),
    st.text(odd_chars, max_size=10),
    st.tuples(valid_ids, st.sampled_from(NASTY_CHARS), st.integers(0, 64)).map(_insert),
    st.tuples(valid_ids, odd_chars, st.integers(0, 64)).map(_insert),
)
EDGE_INTS = [
    0,
    1,
    -1,
    5,
    99,
    100,
    101,
    2**31 - 1,
    2**31,
    -(2**31),
    -(2**31) - 1,
    2**53 - 1,
    2**53,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    10**15 - 1,
    10**15,
    10**16,
    -(10**15),
    10**100,
]
ints = st.one_of(st.sampled_from(EDGE_INTS), st.integers(), st.integers(-10, 10**5))
floats = st.one_of(
    st.sampled_from([0.5, -0.0, 1.0, 5.0, 100.0, 1e15, 1e308, 5e-324, -1.5]),
    st.floats(allow_nan=True, allow_infinity=True),
)
scalars = st.one_of(st.none(), st.booleans(), ints, floats, texts)
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(texts, inner, max_size=5)),
    max_leaves=12,
)


def wild(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Half the time a valid value, otherwise anything: nasty text, numbers, wrong JSON types."""
    return st.one_of(valid, st.one_of(texts, ints, floats, json_values))


def has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _fits_a_file_name(text: str) -> bool:
    """Whether every path component of ``text`` fits a file name (a time zone key is one)."""
    return all(len(part.encode("utf-8", "surrogatepass")) <= 255 for part in text.split("/"))


SAFE_MIN = datetime(2, 1, 1)
SAFE_MAX = datetime(9998, 12, 31)
offsets = st.sampled_from([UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))])
datetimes = st.one_of(
    st.datetimes(SAFE_MIN, SAFE_MAX, timezones=offsets).map(lambda d: d.isoformat()),
    st.datetimes(SAFE_MIN, SAFE_MAX).map(lambda d: d.isoformat()),
    st.dates(SAFE_MIN.date(), SAFE_MAX.date()).map(lambda d: d.isoformat()),
    st.sampled_from(
        [
            "2026-11-21T12:00:00Z",
            "2026-11-21T12:00:00+24:00",
            "2026-02-30T00:00:00Z",
            "2026-11-21T25:00:00Z",
            "2026-W47",
            "yesterday",
            "",
            "1e9",
        ]
    ),
)
emails: st.SearchStrategy[str] = st.one_of(
    st.emails(),
    st.emails().map(str.upper),
    st.emails().map(lambda e: f"  {e}\t"),
    st.tuples(texts, texts).map(lambda p: f"{p[0]}@{p[1]}.example"),
    st.tuples(st.emails(), st.sampled_from(NASTY_CHARS), st.integers(0, 80)).map(_insert),
    texts,
).filter(lambda e: not has_surrogate(e))
ulids = st.from_regex(r"[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}", fullmatch=True)
uuids = st.uuids().map(str)
zones = st.one_of(
    st.sampled_from(sorted(available_timezones())),
    st.sampled_from(["UTC", "Factory", "posixrules", "zone.tab", "/etc/localtime", "Europe/"]),
    texts,
).filter(_fits_a_file_name)

PLAYERS = ["fz-p1", "fz-p2", "fz-p3"]
BOARDS = ["fz-best", "fz-asc", "fz-inc"]
FAMILIES = ["fz-day", "fz-week", "fz-season"]
GAME = "fz-game"
REUSED_SUBMISSION = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

player_ids = st.one_of(st.sampled_from([*PLAYERS, "nobody"]), valid_ids)
board_ids = st.one_of(
    st.sampled_from([*BOARDS, "nope", "fz-day.daily.2026-11-21", "fz-day.daily.9999-99-99"]),
    valid_ids,
)
family_ids = st.one_of(st.sampled_from([*FAMILIES, "nope"]), valid_ids)


def _deep(depth: int, arrays: bool) -> Any:
    """An object nested ``depth`` deep through objects, or through arrays below the top."""
    inner: Any = [] if arrays else {}
    for _ in range(depth - 2):
        inner = [inner] if arrays else {"a": inner}
    return {"a": inner} if depth > 1 else {}


def _sized(parts: tuple[int, str]) -> dict[str, str]:
    """An object of about ``size`` bytes of compact UTF-8 JSON, filled with ``char``."""
    size, char = parts
    return {"k": char * max(0, (size - 8) // len(char.encode("utf-8", "surrogatepass")))}


metadata_documents: st.SearchStrategy[Any] = st.one_of(
    st.dictionaries(texts, json_values, max_size=5),
    json_values,
    st.tuples(st.integers(1, 12), st.booleans()).map(lambda p: _deep(*p)),
    st.sampled_from([20, 200, 500]).map(lambda d: _deep(d, False)),
    st.tuples(
        st.integers(1000, 1040), st.sampled_from(["x", "\u00e9", "\u20ac", "\U0001f600"])
    ).map(_sized),
    st.sampled_from(
        [
            {"k": float("nan")},
            {"k": [float("inf")]},
            {"k": "\ud800"},
            {"\udfff": 1},
            {"k": 10**400},
            {"k": [0] * 5000},
            {str(i): i for i in range(400)},
            "{}",
            [],
            [{}],
        ]
    ),
)
"""Play metadata: objects of any JSON, other JSON values, documents around the depth and size
limits, non-finite numbers, lone surrogates, huge numbers and wide documents."""
