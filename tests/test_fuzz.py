"""Property-based fuzzing of the whole request surface: every mutation input, query variables,
cursors, page sizes, deep and wide documents, malformed bodies and odd GET requests.

Every example must get a typed answer: no 500, no traceback or Python exception name in the
body, an ``extensions.code`` on every GraphQL error (never INTERNAL_SERVER_ERROR), and a short
4xx for anything that is not GraphQL. The service must still answer afterwards, and every item
of the table must still match the key grammar of the README (``tests/key_grammar.py``).

The last section pins down, as strict xfails, the inputs that the service does not yet answer
that way; the strategies above stay clear of exactly those inputs (see ``KNOWN_CRASHES``)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import io
import json
import re
import string
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote, unquote_plus
from zoneinfo import available_timezones

import pytest
from aiohttp.test_utils import TestClient, TestServer
from graphql import Lexer, Source, TokenKind
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dynamo.errors import ErrorCode
from leaderboard.app import create_app
from leaderboard.config import Settings
from tests.conftest import API_KEYS, LOCAL_CREDENTIALS, Api, Clock
from tests.key_grammar import key_violation, key_violations
from tests.scan import scan_items

# ---------------------------------------------------------------------------------------------
# Invariants of every answer
# ---------------------------------------------------------------------------------------------

LEAKS = (
    "Traceback",
    'File "',
    "KeyError",
    "TypeError",
    "ValueError",
    "AttributeError",
    "IndexError",
    "ValidationError",
    "ClientError",
    "BotoCoreError",
    "OverflowError",
    "RecursionError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "AssertionError",
    "ZeroDivisionError",
    "OSError",
    "RuntimeError",
    "LookupError",
    "JSONDecodeError",
    "maximum recursion depth",
    "botocore",
    "site-packages",
)
USER_ERROR_CODES = frozenset(code.value for code in ErrorCode)
PRE_EXECUTION = frozenset({"BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"})
GRAPHQL_CODES = USER_ERROR_CODES | PRE_EXECUTION
JSON_TYPES = frozenset({"application/json", "application/graphql-response+json"})
SHORT_BODY = 2048
MAX_BODY = 1 << 20
REQUEST_ID = frozenset(string.ascii_letters + string.digits + "._-")


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    text: str
    request_id: str | None


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value, dictionary keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _sent_text(*parts: Any) -> str:
    """What a request carried, as text: an echo of it in an answer is not a leak."""
    found: list[str] = []
    for part in parts:
        if isinstance(part, bytes):
            decoded = part.decode("utf-8", "replace")
            found.append(decoded)
            with contextlib.suppress(ValueError, RecursionError):
                found.extend(_strings(json.loads(decoded)))
        else:
            found.extend(_strings(part))
    return "\n".join(found)


def _user_errors(data: Any) -> Iterator[dict[str, Any]]:
    """The UserError objects of every mutation payload inside ``data``."""
    if isinstance(data, dict):
        errors = data.get("errors")
        if isinstance(errors, list):
            yield from (e for e in errors if isinstance(e, dict) and "code" in e)
        for key, value in data.items():
            if key != "errors":
                yield from _user_errors(value)
    elif isinstance(data, list):
        for value in data:
            yield from _user_errors(value)


def check_graphql(body: Any, context: str) -> dict[str, Any]:
    """A GraphQL response: data and/or errors, every error coded, nothing internal."""
    assert isinstance(body, dict), context
    assert set(body) <= {"data", "errors", "extensions"}, context
    assert "data" in body or "errors" in body, context
    for error in body.get("errors") or []:
        assert isinstance(error.get("message"), str), context
        assert error["message"], context
        code = (error.get("extensions") or {}).get("code")
        assert code in GRAPHQL_CODES, f"{code!r} in {error!r}; {context}"
    for error in _user_errors(body.get("data")):
        assert error["code"] in USER_ERROR_CODES, f"{error!r}; {context}"
        assert isinstance(error.get("message"), str), context
        assert error["message"], context
    return body


def check_reply(reply: Reply, sent: str, *, ide: bool = False) -> dict[str, Any] | None:
    """The invariants of every answer; returns the GraphQL body when there is one."""
    context = f"sent {sent[:300]!r}; got {reply.status} {reply.content_type} {reply.text[:500]!r}"
    assert reply.status < 500, context
    for leak in LEAKS:
        assert leak not in reply.text or leak in sent, f"{leak!r} leaked; {context}"
    if reply.request_id is not None:
        assert 1 <= len(reply.request_id) <= 64, context
        assert set(reply.request_id) <= REQUEST_ID, context
    if reply.content_type in JSON_TYPES:
        body = json.loads(reply.text)
        decoded = "\n".join(_strings(body))
        for leak in LEAKS:
            assert leak not in decoded or leak in sent, f"{leak!r} leaked; {context}"
        return check_graphql(body, context)
    if reply.content_type == "text/html":
        assert ide, f"an HTML page was not asked for; {context}"
        assert reply.status == 200, context
        return None
    assert 400 <= reply.status < 500, f"not GraphQL, so a 4xx; {context}"
    assert len(reply.text) <= SHORT_BODY, f"a long error body; {context}"
    return None


async def _reply(response: Any) -> Reply:
    return Reply(
        status=response.status,
        content_type=response.content_type,
        text=await response.text(errors="replace"),
        request_id=response.headers.get("X-Request-Id"),
    )


async def graphql(
    api: Api,
    query: Any,
    variables: Any = None,
    *,
    key: str | None = API_KEYS[0],
    headers: dict[str, str] | None = None,
) -> dict[str, Any] | None:
    """POST a GraphQL request (any JSON in its fields) and check the answer: the GraphQL body,
    or None when the request was refused before GraphQL (no query, or a body over 1 MiB)."""
    payload = {"query": query, "variables": variables}
    data = json.dumps(payload).encode()
    sent_headers = {"Content-Type": "application/json", **(headers or {})}
    if key is not None:
        sent_headers["Authorization"] = f"Bearer {key}"
    response = await api.http.post("/graphql", data=io.BytesIO(data), headers=sent_headers)
    reply = await _reply(response)
    body = check_reply(reply, _sent_text(payload, list((headers or {}).values())))
    if len(data) > MAX_BODY:
        assert reply.status == 413, reply
        return None
    if not query:
        assert reply.status == 400, reply
        return None
    assert reply.status == 200, reply
    assert body is not None
    return body


async def raw_http(api: Api, request: bytes) -> Reply:
    """Send ``request`` byte for byte on a fresh connection and read the whole answer."""
    server = api.http.server
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        writer.write(request)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=10)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines[1:])
    }
    return Reply(
        status=status,
        content_type=headers.get("content-type", "").split(";")[0].strip().lower(),
        text=body.decode("utf-8", "replace"),
        request_id=headers.get("x-request-id"),
    )


def http_request(
    method: str, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes = b""
) -> bytes:
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: fuzz", b"Connection: close"]
    lines += [name + b": " + value for name, value in headers]
    if body or method not in ("GET", "HEAD"):
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def assert_alive(api: Api) -> None:
    response = await api.http.post("/graphql", json={"query": "{ __typename }"})
    assert response.status == 200
    assert await response.json() == {"data": {"__typename": "Query"}}


async def assert_keys_well_formed(api: Api) -> list[dict[str, Any]]:
    items = await scan_items(api.db)
    assert key_violations(items) == []
    return items


async def settle(api: Api) -> None:
    """After an example: the service still answers and every key is well formed."""
    await assert_alive(api)
    await assert_keys_well_formed(api)


def _by_key(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))


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


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

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
    "PLAYER#x",
    "LEADERBOARD#fz-best",
    "SCORE#9#9#x",
    "#METADATA",
    "SESSION#01ARZ3NDEKTSV4RRFFQ69G5FAV",
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


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _fits_a_file_name(text: str) -> bool:
    """Whether every path component of ``text`` fits a file name (a time zone key is one)."""
    return all(len(part.encode("utf-8", "surrogatepass")) <= 255 for part in text.split("/"))


# The service answers INTERNAL_SERVER_ERROR or 500 for these inputs (the tests at the end of
# this module); the strategies keep to inputs outside them.
KNOWN_CRASHES = {
    "subscription over HTTP": "test_subscription_over_http",
}

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
).filter(lambda e: not _has_surrogate(e))
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


def _input(
    required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[Any]:
    """A mutation input: fields valid or wild, some missing, some unknown, or not an object."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        fields = draw(st.fixed_dictionaries({k: wild(v) for k, v in required.items()}))
        fields.update(
            draw(st.fixed_dictionaries({}, optional={k: wild(v) for k, v in optional.items()}))
        )
        for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=2)) if fields else []:
            fields.pop(name, None)
        fields.update(draw(st.dictionaries(texts, json_values, max_size=2)))
        return fields

    return st.one_of(build(), build(), build(), json_values)


periods = st.sampled_from(["DAILY", "WEEKLY", "SEASON", "GLOBAL", "daily", "HOURLY", ""])
sort_orders = st.sampled_from(["DESC", "ASC", "asc", "UP"])
operators = st.sampled_from(["BEST", "LATEST", "INCREMENT", "SUM", "best"])
widths = st.one_of(st.integers(-2, 17), st.sampled_from(EDGE_INTS))

CREATE_PLAYER = """mutation($i: CreatePlayerInput!) { createPlayer(input: $i) {
    player { id name email lifetimeScore gamesPlayed } errors { code message field } } }"""
CREATE_BOARD = """mutation($i: CreateLeaderboardInput!) { createLeaderboard(input: $i) {
    leaderboard { id name period sortOrder operator scoreWidth startsAt endsAt entryCount }
    errors { code message field } } }"""
CREATE_FAMILY = """mutation($i: CreateLeaderboardFamilyInput!) {
    createLeaderboardFamily(input: $i) {
    family { id timezone seasonStart seasonDays retentionDays current { id startsAt endsAt } }
    errors { code message field } } }"""
SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    improved duplicate session { id score gameId leaderboardIds submissionId }
    score { score rank } rank { rank total percentile }
    entries { leaderboardId improved score { score } rank { rank } }
    errors { code message field } } }"""

player_inputs = _input(
    {"name": texts, "email": emails},
    {"id": st.one_of(st.none(), player_ids, valid_ids)},
)
board_inputs = _input(
    {"id": board_ids, "name": texts, "period": periods},
    {
        "sortOrder": sort_orders,
        "operator": operators,
        "scoreWidth": widths,
        "startsAt": datetimes,
        "endsAt": datetimes,
    },
)
family_inputs = _input(
    {"id": family_ids, "name": texts, "period": periods},
    {
        "timezone": zones,
        "sortOrder": sort_orders,
        "operator": operators,
        "scoreWidth": widths,
        "seasonStart": datetimes,
        "seasonDays": st.one_of(st.integers(-2, 400), st.integers(-(2**31), 1_000_000)),
        "retentionDays": st.one_of(st.integers(-2, 4000), st.sampled_from(EDGE_INTS)),
    },
)
id_lists = st.lists(st.one_of(board_ids, texts), max_size=24)
submit_inputs = _input(
    {"playerId": player_ids, "gameId": st.one_of(st.just(GAME), valid_ids), "score": ints},
    {
        "leaderboardId": st.one_of(st.none(), board_ids),
        "leaderboardIds": st.one_of(st.none(), id_lists),
        "familyIds": st.one_of(st.none(), st.lists(family_ids, max_size=22)),
        "durationSec": st.one_of(st.none(), ints),
        "submissionId": st.one_of(st.none(), st.just(REUSED_SUBMISSION), ulids, uuids, texts),
    },
)


def _family_safe(value: Any) -> bool:
    """Whether a createLeaderboardFamily input stays clear of KNOWN_CRASHES."""
    if not isinstance(value, dict):
        return True
    days = value.get("seasonDays")
    return not (isinstance(days, int) and not isinstance(days, bool) and days > 1_000_000)


ENTITY = {
    "createPlayer": "player",
    "createLeaderboard": "leaderboard",
    "createLeaderboardFamily": "family",
    "submitScore": "session",
}
MUTATIONS: list[tuple[str, str, st.SearchStrategy[Any]]] = [
    ("createPlayer", CREATE_PLAYER, player_inputs),
    ("createLeaderboard", CREATE_BOARD, board_inputs),
    ("createLeaderboardFamily", CREATE_FAMILY, family_inputs.filter(_family_safe)),
    ("submitScore", SUBMIT, submit_inputs),
]


CURSOR_LISTS = {
    "topScores": """query($c: String) { leaderboard(id: "fz-best") {
        topScores(first: 1, after: $c) { edges { cursor } } } }""",
    "scores": """query($c: String) { player(id: "fz-p1") {
        scores(first: 1, after: $c) { edges { cursor } } } }""",
    "sessions": """query($c: String) { player(id: "fz-p1") {
        sessions(first: 1, after: $c) { edges { cursor } } } }""",
    "gameSessions": f"""query($c: String) {{ gameSessions(gameId: "{GAME}", first: 1,
        after: $c) {{ edges {{ cursor }} }} }}""",
}


# ---------------------------------------------------------------------------------------------
# A table with something in it
# ---------------------------------------------------------------------------------------------


@dataclass
class World:
    api: Api
    cursors: dict[str, str]
    sessions: list[tuple[str, str]]
    """(player id, session id) of every session written by the fixture."""
    items: list[dict[str, Any]] | None = None
    """The table as the last example that passed left it (None: not known)."""

    async def scan(self) -> list[dict[str, Any]]:
        """The table's items, sorted by key; from the last passing example when known."""
        items, self.items = self.items, None
        return items if items is not None else _by_key(await scan_items(self.api.db))


async def _ok(api: Api, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    data = await api.gql(query, variables)
    payload: dict[str, Any] = next(iter(data.values()))
    assert payload["errors"] == [], payload
    return payload


@pytest.fixture
async def world(api: Api) -> World:
    for player in PLAYERS:
        await api.create_player(player)
    await api.create_board("fz-best", scoreWidth=4)
    await api.create_board("fz-asc", sortOrder="ASC", operator="LATEST", scoreWidth=2)
    await api.create_board("fz-inc", operator="INCREMENT", scoreWidth=3)
    families: list[dict[str, Any]] = [
        {"id": "fz-day", "period": "DAILY", "scoreWidth": 5},
        {"id": "fz-week", "period": "WEEKLY", "timezone": "Pacific/Kiritimati"},
        {
            "id": "fz-season",
            "period": "SEASON",
            "seasonStart": "2020-01-01T00:00:00Z",
            "seasonDays": 30,
        },
    ]
    for fields in families:
        await _ok(api, CREATE_FAMILY, {"i": {"name": fields["id"], **fields}})
    sessions: list[tuple[str, str]] = []
    for n, player in enumerate(PLAYERS):
        for board in BOARDS:
            payload = await api.submit(player, board, 3 + n, game_id=GAME)
            sessions.append((player, payload["session"]["id"]))
    cursors = {}
    for name, query in CURSOR_LISTS.items():
        found = [v for v in _strings(await api.gql(query, {"c": None})) if "." in v]
        assert len(found) == 1, found
        cursors[name] = found[0]
    await assert_keys_well_formed(api)
    return World(api, cursors, sessions)


# ---------------------------------------------------------------------------------------------
# The key grammar itself
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------------------------


async def _fuzz_mutation(world: World, name: str, document: str, value: Any) -> dict[str, Any]:
    """Send one mutation with a valid key: a typed answer, and nothing written on error."""
    api = world.api
    before = await world.scan()
    body = await graphql(api, document, {"i": value})
    after = _by_key(await assert_keys_well_formed(api))
    if body is None:
        assert after == before
        await assert_alive(api)
        return {}
    if body.get("errors"):
        # Refused before execution: bad variables or document.
        assert body.get("data") is None, body
        assert {e["extensions"]["code"] for e in body["errors"]} <= PRE_EXECUTION, body
        assert after == before
        await assert_alive(api)
        world.items = after
        return body
    payload = body["data"][name]
    entity = payload[ENTITY[name]]
    if payload["errors"]:
        assert entity is None, payload
        assert after == before, f"{name} failed with {payload['errors']} but wrote"
    else:
        assert entity is not None, payload
    await assert_alive(api)
    world.items = after
    return body


@fuzz(60)
@given(value=player_inputs)
async def test_create_player_inputs(world: World, value: Any) -> None:
    body = await _fuzz_mutation(world, "createPlayer", CREATE_PLAYER, value)
    player = ((body.get("data") or {}).get("createPlayer") or {}).get("player")
    if player is not None:
        email = player["email"]
        assert email == email.strip().lower()
        assert email == value["email"].strip().lower()


@fuzz(60)
@given(value=board_inputs)
async def test_create_leaderboard_inputs(world: World, value: Any) -> None:
    await _fuzz_mutation(world, "createLeaderboard", CREATE_BOARD, value)


@fuzz(60)
@given(value=family_inputs.filter(_family_safe))
async def test_create_leaderboard_family_inputs(world: World, value: Any) -> None:
    await _fuzz_mutation(world, "createLeaderboardFamily", CREATE_FAMILY, value)


@fuzz(100)
@given(value=submit_inputs)
async def test_submit_score_inputs(world: World, value: Any) -> None:
    body = await _fuzz_mutation(world, "submitScore", SUBMIT, value)
    payload = (body.get("data") or {}).get("submitScore")
    if payload is not None and not payload["errors"]:
        game = value["gameId"]
        assert payload["session"]["gameId"] == (game if isinstance(game, str) else str(int(game)))


def _accepted(authorization: str | None) -> bool:
    """Whether the service takes this Authorization header as a valid key."""
    if authorization is None or authorization[:7].lower() != "bearer ":
        return False
    return authorization[7:].strip() in API_KEYS


authorizations = st.one_of(
    st.none(),
    st.sampled_from(
        ["", "Bearer", "Bearer ", "bearer", "Basic dGVzdA==", API_KEYS[0], "Bearer  \t"]
    ),
    st.sampled_from(API_KEYS).map(lambda k: f"Bearer {k}x"),
    st.sampled_from(API_KEYS).map(lambda k: f"Bearer {k[:-1]}"),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60).map(
        lambda t: f"Bearer {t}"
    ),
).filter(lambda h: not _accepted(h))


@fuzz(50)
@given(
    mutation=st.sampled_from(MUTATIONS).flatmap(
        lambda m: st.tuples(st.just(m[0]), st.just(m[1]), m[2])
    ),
    authorization=authorizations,
)
async def test_mutations_without_a_valid_key_write_nothing(
    world: World, mutation: tuple[str, str, Any], authorization: str | None
) -> None:
    api = world.api
    _, document, value = mutation
    before = await world.scan()
    headers = {"Authorization": authorization} if authorization is not None else {}
    body = await graphql(api, document, {"i": value}, key=None, headers=headers)
    if body is not None:
        assert body.get("data") is None, body
        codes = {e["extensions"]["code"] for e in body["errors"]}
        assert codes <= {"UNAUTHENTICATED", *PRE_EXECUTION}, body
    assert _by_key(await scan_items(api.db)) == before
    await assert_alive(api)
    world.items = before


# ---------------------------------------------------------------------------------------------
# Query variables, cursors and page sizes
# ---------------------------------------------------------------------------------------------

ids_lists = st.lists(st.one_of(player_ids, board_ids), max_size=110)
page_sizes = st.one_of(st.integers(-3, 104), st.sampled_from(EDGE_INTS))
at_values = datetimes
session_ids = st.one_of(ulids, st.just(REUSED_SUBMISSION), texts)

QUERIES: list[tuple[str, dict[str, st.SearchStrategy[Any]]]] = [
    (
        "query($id: ID!) { player(id: $id) { id name email lifetimeScore gamesPlayed } }",
        {"id": player_ids},
    ),
    ("query($ids: [ID!]!) { players(ids: $ids) { id } }", {"ids": ids_lists}),
    ("query($e: String!) { playerByEmail(email: $e) { id } }", {"e": emails}),
    (
        """query($id: ID!, $first: Int, $after: String) { leaderboard(id: $id) { id entryCount
        topScores(first: $first, after: $after) { edges { cursor node { rank score
        player { id } } } pageInfo { hasNextPage endCursor } } } }""",
        {"id": board_ids, "first": page_sizes, "after": texts},
    ),
    (
        "query($id: ID!, $p: ID!) { leaderboard(id: $id) { rankOf(playerId: $p) { rank total } } }",
        {"id": board_ids, "p": player_ids},
    ),
    (
        """query($id: ID!, $ps: [ID!]!) { leaderboard(id: $id) {
        ranksOf(playerIds: $ps) { rank } } }""",
        {"id": board_ids, "ps": ids_lists},
    ),
    (
        """query($id: ID!, $p: ID!, $b: Int!, $a: Int!) { leaderboard(id: $id) {
        around(playerId: $p, before: $b, after: $a) { rank percentile } } }""",
        {"id": board_ids, "p": player_ids, "b": page_sizes, "a": page_sizes},
    ),
    (
        """query($id: ID!, $at: DateTime!) { leaderboardFamily(id: $id) { id
        current { id entryCount } previous { id } board(at: $at) { id } } }""",
        {"id": family_ids, "at": at_values},
    ),
    (
        "query($p: ID!, $s: ID!) { session(playerId: $p, sessionId: $s) { id score } }",
        {"p": player_ids, "s": session_ids},
    ),
    (
        """query($g: ID!, $first: Int, $after: String) { gameSessions(gameId: $g, first: $first,
        after: $after) { edges { cursor node { id } } } }""",
        {"g": st.one_of(st.just(GAME), valid_ids), "first": page_sizes, "after": texts},
    ),
    (
        """query($p: ID!, $b: ID!, $bs: [ID!]!, $first: Int, $after: String) { player(id: $p) {
        bestScore(leaderboardId: $b) { score } rank(leaderboardId: $b) { rank }
        ranks(leaderboardIds: $bs) { rank } scores(first: $first, after: $after) {
        edges { cursor } } sessions(first: $first, after: $after) { edges { cursor } } } }""",
        {"p": player_ids, "b": board_ids, "bs": ids_lists, "first": page_sizes, "after": texts},
    ),
]


@st.composite
def query_requests(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    document, variables = draw(st.sampled_from(QUERIES))
    values = draw(st.fixed_dictionaries({}, optional={k: wild(v) for k, v in variables.items()}))
    values.update(draw(st.dictionaries(texts, json_values, max_size=2)))
    return document, values


@fuzz(100)
@given(
    request=query_requests(),
    key=st.sampled_from([API_KEYS[0], None]),
    real_session=st.integers(0, 20),
)
async def test_query_variables(
    world: World, request: tuple[str, dict[str, Any]], key: str | None, real_session: int
) -> None:
    document, variables = request
    if "s" in variables and real_session < len(world.sessions):
        variables["p"], variables["s"] = world.sessions[real_session]
    await graphql(world.api, document, variables, key=key)
    await assert_alive(world.api)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signed(payload: bytes, secret: bytes) -> str:
    return f"{_b64(payload)}.{_b64(hmac.new(secret, payload, hashlib.sha256).digest()[:16])}"


key_names = st.sampled_from(["pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"])
key_values = st.one_of(
    texts,
    st.sampled_from(
        [
            "LEADERBOARD#fz-best",
            "LEADERBOARD#fz-asc",
            "PLAYER#fz-p1",
            "PLAYER#fz-p2",
            f"GAME#{GAME}",
            "SCORE#",
            "SCORE#9999#0000000000000#fz-p1",
            "SCORE#zzzz",
            "SCORE#\ud800",
            "SESSION#",
            "SESSION#ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "SCORE#fz-best",
        ]
    ),
    json_values,
)
start_keys = st.one_of(st.dictionaries(key_names, key_values, max_size=6), json_values)


@st.composite
def cursors(draw: st.DrawFn, real: dict[str, str], secret: bytes) -> tuple[str, Any, bool]:
    """A cursor for one list: (list, cursor, whether it can only be INVALID_CURSOR)."""
    target = draw(st.sampled_from(sorted(CURSOR_LISTS)))
    kind = draw(
        st.sampled_from(["foreign", "tampered", "garbage", "forged", "signed", "not a string"])
    )
    if kind == "foreign":
        other = draw(st.sampled_from(sorted(k for k in real if k != target)))
        return target, real[other], True
    if kind == "tampered":
        cursor = real[target]
        at = draw(st.integers(0, len(cursor)))
        edit = draw(st.sampled_from(["replace", "insert", "truncate", "append"]))
        char = draw(
            st.sampled_from(
                [*string.ascii_letters, *string.digits, "-", "_", ".", "=", "!", "\u00e9"]
            )
        )
        changed = {
            "replace": cursor[:at] + char + cursor[at + 1 :],
            "insert": cursor[:at] + char + cursor[at:],
            "truncate": cursor[:at],
            "append": cursor + char * draw(st.integers(1, 1200)),
        }[edit]
        # Base64 ignores stray characters and the unused bits of its last character, so a
        # changed cursor may still decode to the original one.
        return target, changed, False
    if kind == "garbage":
        garbage = st.one_of(
            texts,
            st.tuples(texts, texts).map(lambda p: f"{p[0]}.{p[1]}"),
            st.tuples(st.binary(max_size=60), st.binary(max_size=20)).map(
                lambda p: f"{_b64(p[0])}.{_b64(p[1])}"
            ),
        )
        value = draw(garbage)
        assume(value != real[target])
        return target, value, True
    if kind == "forged":
        payload = json.dumps(draw(start_keys)).encode()
        wrong = draw(st.binary(min_size=16, max_size=40).filter(lambda s: s != secret))
        return target, _signed(payload, wrong), True
    if kind == "signed":
        # Signed with the server's own secret: only the key shape protects the query.
        payload = draw(
            st.one_of(st.just(json.dumps(draw(start_keys)).encode()), st.binary(max_size=80))
        )
        return target, _signed(payload, secret), False
    return target, draw(st.one_of(ints, floats, st.booleans(), st.lists(texts, max_size=3))), True


@fuzz(80)
@given(data=st.data())
async def test_malformed_and_forged_cursors(
    world: World, settings: Settings, data: st.DataObject
) -> None:
    target, cursor, always_refused = data.draw(cursors(world.cursors, settings.cursor_secret))
    body = await graphql(world.api, CURSOR_LISTS[target], {"c": cursor})
    if body is None:
        return
    codes = [e["extensions"]["code"] for e in body.get("errors") or []]
    expected = "BAD_USER_INPUT" if not isinstance(cursor, str) else "INVALID_CURSOR"
    if always_refused:
        assert codes == [expected], body
    else:
        assert codes in ([], [expected]), body
    await assert_alive(world.api)


CONNECTIONS = {
    "topScores": 'leaderboard(id: "fz-best") { topScores(first: FIRST) { edges { cursor } } }',
    "scores": 'player(id: "fz-p1") { scores(first: FIRST) { edges { cursor } } }',
    "sessions": 'player(id: "fz-p1") { sessions(first: FIRST) { edges { cursor } } }',
    "gameSessions": f'gameSessions(gameId: "{GAME}", first: FIRST) {{ edges {{ cursor }} }}',
}
first_literals = st.one_of(
    st.sampled_from(
        [
            "1.5",
            '"5"',
            "null",
            "[1]",
            "{a: 1}",
            "$undeclared",
            "1e3",
            "0x10",
            "-0",
            "01",
            "true",
            "FIVE",
            "5 5",
            "",
            "-",
            "--1",
            "1_000",
            "\u0665",
            "99999999999999999999999",
        ]
    ),
    st.integers().map(str),
)


def _expected_first(value: Any) -> set[str]:
    """The error codes a ``first`` variable value may get (an empty set: no error)."""
    if value is None:
        return set()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return {"BAD_USER_INPUT"}
    if isinstance(value, float) and not value.is_integer():
        return {"BAD_USER_INPUT"}
    number = int(value)
    if not -(2**31) <= number < 2**31:
        return {"BAD_USER_INPUT"}
    return set() if 0 <= number <= 100 else {"INVALID_ARGUMENT"}


@fuzz(80)
@given(
    connection=st.sampled_from(sorted(CONNECTIONS)),
    first=st.one_of(
        st.tuples(st.just("variable"), wild(page_sizes)),
        st.tuples(st.just("literal"), first_literals),
    ),
)
async def test_bad_first_values(world: World, connection: str, first: tuple[str, Any]) -> None:
    how, value = first
    if how == "variable":
        document = "query($f: Int) { " + CONNECTIONS[connection].replace("FIRST", "$f") + " }"
        variables: dict[str, Any] | None = {"f": value}
    else:
        document = "{ " + CONNECTIONS[connection].replace("FIRST", value) + " }"
        variables = None
    body = await graphql(world.api, document, variables)
    if body is None:
        return
    codes = {e["extensions"]["code"] for e in body.get("errors") or []}
    if how == "variable":
        assert codes == _expected_first(value), (value, body)
        if "INVALID_ARGUMENT" in codes:
            assert body["errors"][0]["extensions"]["field"] == "first"
    elif re.fullmatch(r"-?[1-9][0-9]*", value):
        expected = _expected_first(int(value))
        assert codes == (expected - {"BAD_USER_INPUT"}) | (
            {"GRAPHQL_VALIDATION_FAILED"} if "BAD_USER_INPUT" in expected else set()
        ), (value, body)
    else:
        assert codes <= {*PRE_EXECUTION, "INVALID_ARGUMENT"}, (value, body)
    await assert_alive(world.api)


# ---------------------------------------------------------------------------------------------
# Deep and wide documents
# ---------------------------------------------------------------------------------------------

MAX_DEPTH = 10
MAX_CHAIN = 600
"""Longest fragment chain generated: past about 490 the token limit refuses it."""
LONGEST_VALIDATED_CHAIN = 198
"""Longer chains exhaust graphql-core's budget of fragment work in validation (50,000 spreads
and variable usages): a typed "Validation aborted." refusal."""
MAX_BOMB = 60
"""Most levels of a fragment spread twice at every level (2**60 expansions)."""
MAX_ALIASES = 40
MAX_TOKENS = 4000
_CHAIN = ["sessions", "edges", "node", "player"]


def _nested(levels: int) -> str:
    """A selection ``levels`` fields deep: player, sessions, edges, node, player, ..."""
    inner = "__typename"
    for level in reversed(range(1, levels)):
        inner = f"{_CHAIN[(level - 1) % 4]} {{ {inner} }}"
    return f'{{ player(id: "fz-p1") {{ {inner} }} }}' if levels else "{ __typename }"


def _tokens(document: str) -> int:
    lexer = Lexer(Source(document))
    count = 0
    with contextlib.suppress(Exception):
        while lexer.advance().kind is not TokenKind.EOF:
            count += 1
    return count


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, str, int]:
    """A document and the limit it tests: (document, limit name, size)."""
    shape = draw(
        st.sampled_from(
            [
                "depth",
                "aliases",
                "fragments",
                "fragment chain",
                "fragment cycle",
                "fragment bomb",
                "wide",
                "nested lists",
                "introspection",
                "junk",
            ]
        )
    )
    if shape == "depth":
        levels = draw(st.integers(1, 30))
        return _nested(levels), shape, levels
    if shape == "aliases":
        count = draw(st.integers(0, 150))
        field = draw(st.sampled_from(["__typename", 'leaderboard(id: "fz-best") { id }']))
        body = " ".join(f"a{i}: {field}" for i in range(count))
        return f"{{ __typename {body} }}", shape, count
    if shape == "fragments":
        count = draw(st.integers(0, 460))
        spreads = " ".join(f"...F{i}" for i in range(count))
        fragments = " ".join(f"fragment F{i} on Query {{ __typename }}" for i in range(count))
        return f"{{ __typename {spreads} }} {fragments}", shape, count
    if shape == "fragment chain":
        count = draw(st.integers(1, MAX_CHAIN))
        fragments = " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(count))
        return f"{{ ...F0 }} {fragments} fragment F{count} on Query {{ __typename }}", shape, count
    if shape == "fragment bomb":
        count = draw(st.integers(1, MAX_BOMB))
        fragments = " ".join(
            f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(count)
        )
        last = f"fragment F{count} on Query {{ a: __typename }}"
        return f"{{ ...F0 }} {fragments} {last}", shape, count
    if shape == "fragment cycle":
        count = draw(st.integers(1, 50))
        fragments = " ".join(
            f"fragment F{i} on Query {{ ...F{(i + 1) % count} }}" for i in range(count)
        )
        return f"{{ ...F0 }} {fragments}", shape, count
    if shape == "wide":
        count = draw(st.integers(1, 1200))
        field = draw(st.sampled_from(["__typename", 'players(ids: ["fz-p1"]) { id }']))
        return "{ " + " ".join([field] * count) + " }", shape, count
    if shape == "nested lists":
        depth = draw(st.integers(1, 1500))
        return "{ players(ids: " + "[" * depth + "]" * depth + ") { id } }", shape, depth
    if shape == "introspection":
        depth = draw(st.integers(1, 25))
        inner = "name"
        for _ in range(depth):
            inner = f"ofType {{ {inner} }}"
        return f'{{ __type(name: "Query") {{ fields {{ type {{ {inner} }} }} }} }}', shape, depth
    junk = draw(
        st.one_of(
            texts,
            st.lists(
                st.sampled_from(
                    [
                        "{",
                        "}",
                        "(",
                        ")",
                        "[",
                        "]",
                        "...",
                        "@skip",
                        "@include(if: $x)",
                        "$x",
                        ":",
                        "query",
                        "mutation",
                        "subscription",
                        "fragment",
                        "on",
                        "Query",
                        "player",
                        "id",
                        '"s"',
                        "1",
                        "#",
                        "=",
                        "!",
                        ",",
                        "__schema",
                        "\u00e9",
                    ]
                ),
                max_size=60,
            ).map(" ".join),
        )
    )
    return junk, shape, 0


@fuzz(60)
@given(document=documents())
async def test_deep_and_wide_documents(world: World, document: tuple[str, str, int]) -> None:
    query, shape, size = document
    body = await graphql(world.api, query)
    if body is None:
        return
    errors = body.get("errors") or []
    codes = {e["extensions"]["code"] for e in errors}
    messages = " ".join(e["message"] for e in errors)
    tokens = _tokens(query)
    if abs(tokens - MAX_TOKENS) <= 10:
        pass
    elif tokens > MAX_TOKENS:
        assert codes == {"GRAPHQL_VALIDATION_FAILED"}, body
        assert body.get("data") is None
    elif shape == "depth":
        assert (size > MAX_DEPTH) == ("maximum operation depth" in messages), (size, body)
    elif shape == "aliases":
        assert (size > MAX_ALIASES) == ("aliases" in messages), (size, body)
    elif shape == "fragments" or (shape == "fragment chain" and size <= LONGEST_VALIDATED_CHAIN):
        assert codes == set(), body
    elif shape == "fragment chain":
        assert codes == {"GRAPHQL_VALIDATION_FAILED"}, body
        assert messages == "Validation aborted.", body
    elif shape == "fragment bomb":
        # Every expansion counts: 2**size aliased fields.
        assert (2**size > MAX_ALIASES) == ("aliases found" in messages), (size, body)
    elif shape == "introspection":
        assert codes <= {"GRAPHQL_VALIDATION_FAILED"}, body
    elif shape == "fragment cycle":
        assert codes == {"GRAPHQL_VALIDATION_FAILED"}, body
    await assert_alive(world.api)


# ---------------------------------------------------------------------------------------------
# Malformed bodies and odd GET requests
# ---------------------------------------------------------------------------------------------


def _crashes_the_body_parser(content_type: str | None, body: bytes) -> bool:
    """Whether a POST is one of KNOWN_CRASHES: a JSON content type with JSON that is not an
    object or a list, bytes that JSON cannot decode as text, or an integer too long to read."""
    if "application/json" not in (content_type or "").lower():
        return False
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return False
    except (ValueError, RecursionError):
        return True
    return not isinstance(value, dict | list)


def _crashes_json(text: str) -> bool:
    """Whether a GET parameter read as JSON is one of KNOWN_CRASHES."""
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    except (ValueError, RecursionError):
        return True
    return False


content_types = st.one_of(
    st.sampled_from(
        [
            None,
            "application/json",
            "application/json; charset=utf-8",
            "APPLICATION/JSON",
            "application/json; charset=latin-1",
            "application/json; charset=bogus",
            "application/graphql-response+json",
            "application/graphql",
            "application/jsonx",
            "text/plain",
            "text/html",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "multipart/form-data",
            "",
            ";",
            "*/*",
        ]
    ),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40),
)
accepts = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "application/json",
            "application/graphql-response+json",
            "application/graphql-response+json, application/json;q=0.9",
            "application/json;q=0.5, application/graphql-response+json;q=0.6",
            "application/graphql-response+json;q=0",
            "*/*",
            "text/html",
            "text/html, */*;q=0.1",
            "",
            ",,,",
            ";;",
            "application/graphql-response+json;q=nan",
            "application/graphql-response+json;q=1e999, application/json;q=-1",
        ]
    ),
    st.lists(
        st.tuples(
            st.sampled_from(
                ["application/json", "application/graphql-response+json", "*/*", "text/*", "x/y"]
            ),
            st.floats(0, 1).map(lambda q: f"{q:.3f}"),
        ),
        max_size=4,
    ).map(lambda parts: ", ".join(f"{m};q={q}" for m, q in parts)),
)
request_ids = st.one_of(
    st.none(),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=80),
    st.sampled_from(["req-1", "a" * 64, "a" * 65, "../x", "x y"]),
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """Request bodies: truncated, mutated or mistyped GraphQL requests, random text and bytes."""
    document, variables = draw(
        st.one_of(
            query_requests(),
            st.sampled_from(MUTATIONS).flatmap(
                lambda m: st.tuples(st.just(m[1]), m[2].map(lambda i: {"i": i}))
            ),
        )
    )
    request = json.dumps({"query": document, "variables": variables}).encode()
    kind = draw(st.sampled_from(["truncated", "mutated", "mistyped", "batch", "text", "bytes"]))
    if kind == "truncated":
        return request[: draw(st.integers(0, len(request)))]
    if kind == "mutated":
        data = bytearray(request)
        for _ in range(draw(st.integers(1, 5))):
            at = draw(st.integers(0, len(data) - 1))
            data[at] = draw(st.sampled_from(b'{}[]":,\\0a -.eE'))
        return bytes(data)
    if kind == "mistyped":
        fields = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "query": st.one_of(st.just(document), json_values),
                    "variables": json_values,
                    "operationName": json_values,
                    "extensions": json_values,
                },
            )
        )
        fields.update(draw(st.dictionaries(texts, json_values, max_size=2)))
        return json.dumps(fields).encode()
    if kind == "batch":
        return json.dumps(
            draw(st.lists(st.one_of(st.just({"query": document}), json_values), max_size=3))
        ).encode()
    if kind == "text":
        return draw(texts).encode("utf-8", "surrogatepass")
    return draw(st.binary(max_size=200))


@fuzz(90)
@given(
    body=bodies(),
    content_type=content_types,
    accept=accepts,
    request_id=request_ids,
    authorization=st.sampled_from([None, f"Bearer {API_KEYS[0]}"]),
)
async def test_malformed_request_bodies(
    world: World,
    body: bytes,
    content_type: str | None,
    accept: str | None,
    request_id: str | None,
    authorization: str | None,
) -> None:
    assume(not _crashes_the_body_parser(content_type, body))
    headers = [
        (name.encode(), value.encode())
        for name, value in [
            ("Content-Type", content_type),
            ("Accept", accept),
            ("X-Request-Id", request_id),
            ("Authorization", authorization),
        ]
        if value is not None
    ]
    reply = await raw_http(world.api, http_request("POST", b"/graphql", headers, body))
    check_reply(reply, _sent_text(body, [request_id or ""]))
    if request_id is not None and reply.request_id is not None:
        sane = 1 <= len(request_id) <= 64 and set(request_id) <= REQUEST_ID
        assert (reply.request_id == request_id) == sane, (request_id, reply.request_id)
    await settle(world.api)


query_keys = st.one_of(
    st.sampled_from(["query", "variables", "operationName", "extensions", "Query", "query[]", ""]),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=10),
)


def _encode(text: str, how: str) -> str:
    if how == "quoted":
        return quote(text, safe="")
    if how == "plus":
        return quote(text, safe="").replace("%20", "+")
    return "".join(c if 0x21 <= ord(c) <= 0x7E and c not in "&#" else quote(c) for c in text)


@st.composite
def query_strings(draw: st.DrawFn) -> bytes:
    """A query string: GraphQL or junk values under odd names, encoded in odd ways."""
    document, variables = draw(query_requests())
    values = st.one_of(
        st.just(document),
        st.just(json.dumps(variables)),
        st.sampled_from(
            [
                "{ __typename }",
                "mutation { __typename }",
                "mutation { createPlayer(input: "
                '{name: "n", email: "e@x.example"}) { errors { code } } }',
                "{",
                "null",
                "[]",
                "{}",
                "1",
                '"x"',
                "%",
                "%zz",
                "%00",
                "%ff%fe",
                "%C0%AF",
                "+",
                "=",
                "==",
                ";",
            ]
        ),
        texts.filter(lambda t: not _has_surrogate(t)),
        json_values.map(json.dumps),
    )
    pairs = draw(
        st.lists(
            st.tuples(query_keys, values, st.sampled_from(["quoted", "plus", "raw"])), max_size=5
        )
    )
    joined = "&".join(
        f"{_encode(k, how)}={v if v.startswith('%') else _encode(v, how)}" for k, v, how in pairs
    )
    suffix = draw(st.sampled_from(["", "&", "&&", "#frag", "?", "&=", "&query"]))
    return (joined + suffix).encode("utf-8")[:6000]


@fuzz(70)
@given(
    query_string=query_strings(),
    method=st.sampled_from(["GET", "GET", "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"]),
    accept=accepts,
    authorization=st.sampled_from([None, f"Bearer {API_KEYS[0]}"]),
)
async def test_get_requests_with_odd_query_strings(
    world: World, query_string: bytes, method: str, accept: str | None, authorization: str | None
) -> None:
    for value in query_string.split(b"&"):
        name, _, raw_value = value.partition(b"=")
        if name in (b"variables", b"extensions"):
            # Only query strings whose JSON parameters stay clear of KNOWN_CRASHES.
            assume(not _crashes_json(unquote_plus(raw_value.decode("utf-8", "replace"))))
    headers = [
        (name.encode(), value.encode())
        for name, value in [("Accept", accept), ("Authorization", authorization)]
        if value is not None
    ]
    reply = await raw_http(world.api, http_request(method, b"/graphql?" + query_string, headers))
    ide = method == "GET" and accept is not None and ("text/html" in accept or "*/*" in accept)
    if method == "HEAD":
        assert reply.status < 500
    else:
        check_reply(reply, _sent_text(query_string), ide=ide)
    await settle(world.api)


# ---------------------------------------------------------------------------------------------
# Inputs the service does not answer as it should yet (KNOWN_CRASHES)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
async def bare(settings: Settings) -> AsyncIterator[Api]:
    """The service over no table: for requests refused before anything is read or written."""
    app = create_app(settings, credentials=LOCAL_CREDENTIALS, clock=Clock())
    async with TestClient(TestServer(app)) as http:
        yield Api(http, Clock())


def _codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors") or []]


async def test_email_with_a_lone_surrogate_is_rejected(api: Api) -> None:
    body = await api.raw(
        CREATE_PLAYER, {"i": {"id": "sur", "name": "n", "email": "\ud800@x.example"}}
    )
    assert [e["code"] for e in body["data"]["createPlayer"]["errors"]] == ["INVALID_EMAIL"], body
    assert key_violations(await scan_items(api.db)) == []


CREATES_AT_THE_ENDS = {
    "startsAt year 1 +05:00": (
        CREATE_BOARD,
        {"id": "b", "name": "n", "period": "DAILY", "startsAt": "0001-01-01T00:00:00+05:00"},
    ),
    "endsAt year 9999 -05:00": (
        CREATE_BOARD,
        {"id": "b", "name": "n", "period": "DAILY", "endsAt": "9999-12-31T23:59:59-05:00"},
    ),
    "seasonStart year 1 +05:00": (
        CREATE_FAMILY,
        {
            "id": "f",
            "name": "n",
            "period": "SEASON",
            "seasonStart": "0001-01-01T00:00:00+05:00",
            "seasonDays": 7,
        },
    ),
}
BOARDS_AT_THE_ENDS = {
    "daily board(at:) 9999-12-31 UTC": ("DAILY", "UTC", "9999-12-31T12:00:00Z"),
    "weekly board(at:) 0001-01-01 Etc/GMT+12": ("WEEKLY", "Etc/GMT+12", "0001-01-01T00:00:00Z"),
}


@pytest.mark.parametrize("case", [*CREATES_AT_THE_ENDS, *BOARDS_AT_THE_ENDS])
async def test_datetimes_at_the_ends_of_the_calendar(api: Api, case: str) -> None:
    if case in CREATES_AT_THE_ENDS:
        document, value = CREATES_AT_THE_ENDS[case]
        body = await api.raw(document, {"i": value})
    else:
        period, zone, at = BOARDS_AT_THE_ENDS[case]
        family = {"id": "f", "name": "n", "period": period, "timezone": zone}
        await _ok(api, CREATE_FAMILY, {"i": family})
        body = await api.raw(
            'query($at: DateTime!) { leaderboardFamily(id: "f") { board(at: $at) { id } } }',
            {"at": at},
        )
    assert "INTERNAL_SERVER_ERROR" not in _codes(body), body


async def test_time_zone_longer_than_a_file_name(api: Api) -> None:
    body = await api.raw(
        CREATE_FAMILY, {"i": {"id": "f", "name": "n", "period": "DAILY", "timezone": "a" * 300}}
    )
    assert _codes(body) == [], body
    errors = body["data"]["createLeaderboardFamily"]["errors"]
    assert [e["code"] for e in errors] == ["INVALID_ARGUMENT"], body


@pytest.mark.parametrize("days", [2**31 - 1, 3_000_000])
async def test_season_days_past_the_calendar(api: Api, days: int) -> None:
    await api.create_player("p")
    created = await api.raw(
        CREATE_FAMILY,
        {
            "i": {
                "id": "s",
                "name": "n",
                "period": "SEASON",
                "seasonStart": "2020-01-01T00:00:00Z",
                "seasonDays": days,
            }
        },
    )
    assert _codes(created) == [], created
    if created["data"]["createLeaderboardFamily"]["errors"]:
        return
    read = await api.raw('{ leaderboardFamily(id: "s") { current { id } previous { id } } }')
    assert _codes(read) == [], read
    play = await api.raw(
        SUBMIT, {"i": {"playerId": "p", "gameId": "g", "score": 1, "familyIds": ["s"]}}
    )
    assert _codes(play) == [], play


@pytest.mark.xfail(
    strict=True,
    reason="a subscription operation sent over HTTP (POST or GET) fails inside execution "
    "(TypeError: Cannot return null for non-nullable field Subscription.leaderboardChanged): "
    "INTERNAL_SERVER_ERROR instead of a typed refusal",
)
async def test_subscription_over_http(api: Api) -> None:
    body = await api.raw(
        'subscription { leaderboardChanged(leaderboardId: "x") { leaderboardId } }'
    )
    assert "INTERNAL_SERVER_ERROR" not in _codes(body), body


NOT_AN_OBJECT = {
    "number": b"5",
    "null": b"null",
    "true": b"true",
    "float": b"1.5",
    "string": b'"x"',
    "invalid UTF-8": b'{"query": "{ __typename }\xff"}',
    "lone byte": b"\xff",
    "UTF-16 BOM": b'\xff\xfe{"query": "{ __typename }"}',
    "5000-digit integer": b'{"query": "{ __typename }", "variables": {"x": ' + b"1" * 5000 + b"}}",
    "nested 5000 deep": b'{"query": "{ __typename }", "variables": {"x": '
    + b"[" * 5000
    + b"]" * 5000
    + b"}}",
}


@pytest.mark.parametrize("body", list(NOT_AN_OBJECT.values()), ids=list(NOT_AN_OBJECT))
async def test_request_body_that_is_not_a_json_object(bare: Api, body: bytes) -> None:
    reply = await raw_http(
        bare, http_request("POST", b"/graphql", [(b"Content-Type", b"application/json")], body)
    )
    assert reply.status == 400, reply
    await assert_alive(bare)


@pytest.mark.parametrize(
    "variables", [b"1" * 5000, b"[" * 3000 + b"]" * 3000], ids=["digits", "nested"]
)
async def test_get_variables_that_crash_the_json_parser(bare: Api, variables: bytes) -> None:
    target = b"/graphql?query=%7B__typename%7D&variables=" + variables
    reply = await raw_http(bare, http_request("GET", target, []))
    assert reply.status == 400, reply


@pytest.mark.parametrize(
    "accept", ["application/json;q=abc", "application/graphql-response+json;q="]
)
async def test_accept_header_with_a_bad_quality(bare: Api, accept: str) -> None:
    response = await bare.http.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"Accept": accept}
    )
    assert response.status == 200, await response.text()


@pytest.mark.parametrize(
    "authorization", [b"Bearer \xff", b"Bearer caf\xe9"], ids=["xff", "latin1"]
)
async def test_authorization_header_that_is_not_utf8(bare: Api, authorization: bytes) -> None:
    body = json.dumps({"query": WRITE_WITHOUT_INPUT}).encode()
    headers = [(b"Content-Type", b"application/json"), (b"Authorization", authorization)]
    reply = await raw_http(bare, http_request("POST", b"/graphql", headers, body))
    assert reply.status == 200, reply
    assert _codes(json.loads(reply.text)) == ["UNAUTHENTICATED"]


WRITE_WITHOUT_INPUT = 'mutation { createLeaderboard(input: {id: "b", name: "b", period: GLOBAL}) { errors { code } } }'  # noqa: E501


@pytest.mark.parametrize("count", [LONGEST_VALIDATED_CHAIN, 450])
async def test_long_fragment_chain_within_the_token_limit(bare: Api, count: int) -> None:
    """No recursion through the chain: answered, or past the validation budget refused with a
    typed error."""
    fragments = " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(count))
    query = f"{{ ...F0 }} {fragments} fragment F{count} on Query {{ __typename }}"
    assert _tokens(query) < MAX_TOKENS
    body = await bare.raw(query)
    if count <= LONGEST_VALIDATED_CHAIN:
        assert body == {"data": {"__typename": "Query"}}, body
    else:
        assert body["data"] is None
        assert [e["extensions"]["code"] for e in body["errors"]] == ["GRAPHQL_VALIDATION_FAILED"]


def test_every_known_crash_is_pinned_by_a_strict_xfail() -> None:
    for crash, name in KNOWN_CRASHES.items():
        test = globals().get(name)
        assert test is not None, crash
        marks = [m for m in getattr(test, "pytestmark", []) if m.name == "xfail"]
        assert [m.kwargs.get("strict") for m in marks] == [True], crash
