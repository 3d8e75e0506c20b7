"""Who may do what: public reads, keyed writes and private fields, rotation."""

from __future__ import annotations

import pytest

from edge.auth import ApiKeys
from resolvers.context import Role
from tests.conftest import API_KEYS, Api
from tests.scan import scan_items

WRITES = [
    'mutation { createPlayer(input: {id: "eve", name: "Eve", email: "eve@x.example"}) '
    "{ errors { code } } }",
    'mutation { createLeaderboard(input: {id: "new", name: "N", period: GLOBAL}) '
    "{ errors { code } } }",
    'mutation { createLeaderboardFamily(input: {id: "fam", name: "F", period: DAILY}) '
    "{ errors { code } } }",
    'mutation { submitScore(input: {playerId: "ann", leaderboardId: "b", gameId: "g", '
    "score: 5}) { errors { code } } }",
]


@pytest.fixture
async def ready(api: Api) -> Api:
    await api.create_player("ann")
    await api.create_board("b")
    await api.submit("ann", "b", 3)
    return api


@pytest.mark.parametrize("key", [None, "wrong-key", "", "test-key-current-but-longer"])
@pytest.mark.parametrize("mutation", WRITES)
async def test_writes_without_a_valid_key_are_refused_and_write_nothing(
    ready: Api, mutation: str, key: str | None
) -> None:
    before = await scan_items(ready.db)
    body = await ready.raw(mutation, key=key)
    assert body["data"] is None
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"]
    assert "Bearer" in body["errors"][0]["message"]
    assert len(await scan_items(ready.db)) == len(before)


@pytest.mark.parametrize("key", API_KEYS)
async def test_every_configured_key_works_so_keys_can_rotate(ready: Api, key: str) -> None:
    body = await ready.raw(WRITES[3], key=key)
    assert "errors" not in body, body
    assert body["data"] == {"submitScore": {"errors": []}}


async def test_public_reads_need_no_key_and_private_fields_stay_private(ready: Api) -> None:
    query = """{ player(id: "ann") { name email rank(leaderboardId: "b") { rank } }
                 leaderboard(id: "b") { topScores { edges { node { score } } } } }"""
    anonymous = await ready.raw(query, key=None)
    assert anonymous["data"]["player"] == {"name": "ann", "email": None, "rank": {"rank": 1}}
    assert anonymous["data"]["leaderboard"]["topScores"]["edges"] == [{"node": {"score": 3}}]
    keyed = await ready.gql(query)
    assert keyed["player"]["email"] == "ann@x.example"

    by_email = '{ playerByEmail(email: "ann@x.example") { id } }'
    refused = await ready.raw(by_email, key=None)
    assert refused["data"] == {"playerByEmail": None}
    assert refused["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert (await ready.gql(by_email))["playerByEmail"] == {"id": "ann"}


async def test_bearer_scheme_is_case_insensitive_and_other_schemes_are_not_accepted(
    ready: Api,
) -> None:
    for header, accepted in [
        (f"bearer {API_KEYS[0]}", True),
        (f"BEARER   {API_KEYS[1]}", True),
        (f"Basic {API_KEYS[0]}", False),
        (API_KEYS[0], False),
    ]:
        response = await ready.http.post(
            "/graphql", json={"query": WRITES[3]}, headers={"Authorization": header}
        )
        errors = (await response.json()).get("errors")
        assert (errors is None) is accepted, header


def test_keys_are_not_revealed_by_their_representation() -> None:
    keys = ApiKeys(["s3cret-one", "s3cret-two"])
    assert "s3cret" not in repr(keys)
    assert not ApiKeys([])
    assert ApiKeys([""]).caller("Bearer ").role is Role.ANONYMOUS
