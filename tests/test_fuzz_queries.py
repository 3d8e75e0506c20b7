"""Fuzzing of query variables, cursors and page sizes: wild variables for every query,
cursors that are foreign, tampered, garbage, forged or signed with the server's own secret, and
``first`` values out of range or of the wrong type, as variables and as literals."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import string
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from dynamo.scores import SCORE
from dynamo.sessions import SESSION
from leaderboard.config import Settings
from tests.conftest import API_KEYS
from tests.fuzz.answers import PRE_EXECUTION, assert_alive, graphql
from tests.fuzz.inputs import GAME, floats, fuzz, ints, json_values, texts, wild
from tests.fuzz.operations import CURSOR_LISTS, page_sizes, query_requests
from tests.fuzz.world import World, world_fixture  # noqa: F401  (the world fixture)


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
            SCORE.pk.fill(leaderboard_id="fz-best"),
            SCORE.pk.fill(leaderboard_id="fz-asc"),
            SESSION.pk.fill(player_id="fz-p1"),
            SESSION.pk.fill(player_id="fz-p2"),
            SESSION.indexes["GSI2"][0].fill(game_id=GAME),
            SCORE.sk.prefix,
            SCORE.sk.fill(rank_value="9999", tie_value="0000000000000", player_id="fz-p1"),
            SCORE.sk.prefix + "zzzz",
            SCORE.sk.prefix + "\ud800",
            SESSION.sk.prefix,
            SESSION.sk.fill(session_id="ZZZZZZZZZZZZZZZZZZZZZZZZZZ"),
            SCORE.indexes["GSI1"][1].fill(leaderboard_id="fz-best"),
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
