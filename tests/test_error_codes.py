"""Every code a client can see is a value of one enum, which the schema exposes as the
GraphQL enum ErrorCode."""

from __future__ import annotations

from typing import Any

from dynamo.errors import ErrorCode
from tests.conftest import Api


async def test_the_schema_enum_is_the_python_enum(api: Api) -> None:
    data = await api.gql(
        """{ codes: __type(name: "ErrorCode") { kind enumValues { name description } }
             userError: __type(name: "UserError") { fields { name
               type { kind ofType { kind name } } } } }"""
    )
    assert data["codes"]["kind"] == "ENUM"
    values = data["codes"]["enumValues"]
    assert [v["name"] for v in values] == [c.value for c in ErrorCode]
    assert all(v["description"] for v in values)
    code = next(f for f in data["userError"]["fields"] if f["name"] == "code")
    assert code["type"] == {"kind": "NON_NULL", "ofType": {"kind": "ENUM", "name": "ErrorCode"}}


async def _codes(api: Api, query: str, variables: dict[str, Any] | None = None) -> set[str]:
    body = await api.raw(query, variables)
    found = {e["extensions"]["code"] for e in body.get("errors", [])}
    for payload in (body.get("data") or {}).values():
        if isinstance(payload, dict):
            found |= {e["code"] for e in payload.get("errors", [])}
    return found


async def test_codes_in_answers_are_enum_values(api: Api) -> None:
    await api.create_player("p")
    await api.create_board("b")
    seen = set()
    for query, variables in [
        ('{ player(id: "a#b") { id } }', None),
        ("{ nope }", None),
        (
            """query($n: Int!) { leaderboard(id: "b") {
                topScores(first: $n) { edges { cursor } } } }""",
            {"n": "x"},
        ),
        (
            """{ leaderboard(id: "b") {
                topScores(first: 1, after: "forged") { edges { cursor } } } }""",
            None,
        ),
        (
            """mutation { createPlayer(input: {id: "p", name: "P", email: "q@x.example"}) {
                errors { code } } }""",
            None,
        ),
        (
            'mutation { submitScore(input: {playerId: "ghost", leaderboardId: "b", gameId: "g", '
            "score: 1}) { errors { code } } }",
            None,
        ),
    ]:
        seen |= await _codes(api, query, variables)
    assert seen == {
        "INVALID_ID",
        "GRAPHQL_VALIDATION_FAILED",
        "BAD_USER_INPUT",
        "INVALID_CURSOR",
        "PLAYER_EXISTS",
        "PLAYER_NOT_FOUND",
    }
    assert seen <= {c.value for c in ErrorCode}
