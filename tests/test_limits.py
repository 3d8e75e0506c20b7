"""Abuse limits: deep, wide and large requests are refused before anything runs."""

from __future__ import annotations

import io
import json
import logging

import pytest

from dynamo.items import serialize
from dynamo.players import PLAYER
from edge.validation import STATS
from leaderboard.config import Limits
from tests.conftest import Api
from tests.scan import scan_items


async def test_a_twenty_level_deep_query_is_refused(api: Api) -> None:
    await api.create_player("ann")
    nested = "player { id }"
    for _ in range(9):
        nested = f"player {{ sessions {{ edges {{ node {{ {nested} }} }} }} }}"
    body = await api.raw(
        f'{{ session(playerId: "ann", sessionId: "01ARZ3NDEKTSV4RRFFQ69G5FAV") {{ {nested} }} }}'
    )
    assert body["data"] is None
    assert body["errors"][0]["extensions"] == {"code": "DEPTH_LIMIT_EXCEEDED", "limit": 10}
    assert "maximum operation depth" in body["errors"][0]["message"]


def _player_fragments(levels: int) -> str:
    """Fragments nesting a player ``levels`` times: 4 fields with a selection set each."""
    nest = "sessions {{ edges {{ node {{ player {{ ...F{next} }} }} }} }}"
    chain = " ".join(
        f"fragment F{i} on Player {{ {nest.format(next=i + 1)} }}" for i in range(levels)
    )
    return f"{chain} fragment F{levels} on Player {{ id }}"


@pytest.mark.parametrize(("levels", "refused"), [(2, False), (3, True)])
async def test_depth_counts_through_fragments(api: Api, levels: int, refused: bool) -> None:
    await api.create_player("ann")
    body = await api.raw(f'{{ player(id: "ann") {{ ...F0 }} }} {_player_fragments(levels)}')
    messages = " ".join(e["message"] for e in body.get("errors", []))
    # 1 + 4 * levels: 9 is within the limit of 10, 13 is not.
    assert ("exceeds maximum operation depth of 10" in messages) is refused, body


async def test_fragments_spread_twice_at_every_level_are_counted_in_full(api: Api) -> None:
    """2**19 expansions of one aliased field (20 fragments, the most a document may define):
    refused at once, not expanded."""
    levels = 19
    fragments = " ".join(
        f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(levels)
    )
    body = await api.raw(f"{{ ...F0 }} {fragments} fragment F{levels} on Query {{ a: __typename }}")
    assert body["data"] is None
    assert body["errors"][0]["extensions"] == {"code": "ALIAS_LIMIT_EXCEEDED", "limit": 40}
    assert body["errors"][0]["message"] == f"{2**levels} aliases found. Allowed: 40"


async def test_a_thousand_aliases_are_refused_and_write_nothing(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    aliases = " ".join(
        f'a{i}: submitScore(input: {{playerId: "ann", leaderboardId: "b", gameId: "g", '
        f"score: {i}}}) {{ improved }}"
        for i in range(1000)
    )
    before = await scan_items(api.db)
    body = await api.raw(f"mutation {{ {aliases} }}")
    assert body["data"] is None
    # About 100,000 characters: refused by its length before it is parsed.
    assert {e["extensions"]["code"] for e in body["errors"]} == {"CHARACTER_LIMIT_EXCEEDED"}
    assert len(await scan_items(api.db)) == len(before)


async def test_a_repeated_document_is_validated_once(api: Api) -> None:
    query = '{ leaderboard(id: "validated-once") { id name } }'
    await api.gql(query)
    before = (STATS.parsed, STATS.validated)
    for _ in range(3):
        assert await api.gql(query) == {"leaderboard": None}
    assert (STATS.parsed, STATS.validated) == before


async def test_a_reasonable_aliased_query_is_fine(api: Api) -> None:
    fields = " ".join(f'b{i}: leaderboard(id: "b{i}") {{ id }}' for i in range(20))
    data = await api.gql(f"{{ {fields} }}")
    assert data == {f"b{i}": None for i in range(20)}


async def test_a_two_megabyte_body_is_413(api: Api) -> None:
    body = json.dumps({"query": "{ __typename }", "variables": {"pad": "x" * (2 << 20)}})
    response = await api.http.post(
        "/graphql", data=io.BytesIO(body.encode()), headers={"Content-Type": "application/json"}
    )
    assert response.status == 413


def _body(size: int) -> bytes:
    """A request body of ``size`` bytes: a short query and variables padding it."""
    empty = json.dumps({"query": "{ __typename }", "variables": {"pad": ""}})
    return json.dumps(
        {"query": "{ __typename }", "variables": {"pad": "x" * (size - len(empty))}}
    ).encode()


async def test_the_body_limit_binds_at_its_bound(api: Api) -> None:
    """The body limit counts what the document limits do not (the variables): a body of the
    limit is answered, one byte more is 413."""
    limit = Limits().max_body_bytes
    for size, status in ((limit, 200), (limit + 1, 413)):
        body = _body(size)
        assert len(body) == size
        response = await api.http.post(
            "/graphql", data=io.BytesIO(body), headers={"Content-Type": "application/json"}
        )
        assert response.status == status, await response.text()
        if status == 200:
            assert (await response.json())["data"] == {"__typename": "Query"}


_IDS = "{{ players(ids: [{}]) {{ id }} }}"
_AROUND = '{{ leaderboard(id: "b") {{ around(playerId: "ann", before: {}) {{ rank }} }} }}'
_FIRST = '{{ leaderboard(id: "b") {{ topScores(first: {}) {{ edges {{ cursor }} }} }} }}'


@pytest.mark.parametrize(
    ("document", "limit", "field"),
    [
        (_FIRST, 100, "first"),
        (_AROUND, 50, "before"),
    ],
    ids=["first", "around"],
)
async def test_each_argument_limit_binds_at_its_bound(
    api: Api, document: str, limit: int, field: str
) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    await api.submit("ann", "b", 1)
    admitted = await api.raw(document.format(limit))
    assert "errors" not in admitted, admitted
    refused = await api.raw(document.format(limit + 1))
    assert [e["extensions"] for e in refused["errors"]] == [
        {"code": "INVALID_ARGUMENT", "field": field}
    ], refused


async def test_the_id_list_limit_binds_at_its_bound(api: Api) -> None:
    """100 ids written in the document (within the token limit) are read; 101 are refused."""
    ids = [f"p{i}" for i in range(101)]
    admitted = await api.raw(_IDS.format(", ".join(f'"{i}"' for i in ids[:100])))
    assert admitted["data"] == {"players": [None] * 100}, admitted
    refused = await api.raw(_IDS.format(", ".join(f'"{i}"' for i in ids)))
    assert [e["extensions"] for e in refused["errors"]] == [
        {"code": "INVALID_ARGUMENT", "field": "ids"}
    ], refused


@pytest.mark.parametrize("first", [10_000, 101, -1])
async def test_page_sizes_are_capped(api: Api, first: int) -> None:
    body = await api.raw(
        f'{{ gameSessions(gameId: "g", first: {first}) {{ edges {{ cursor }} }} }}'
    )
    assert body["errors"][0]["extensions"] == {"code": "INVALID_ARGUMENT", "field": "first"}


async def test_unexpected_failures_are_masked_with_a_request_id_and_logged(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    await api.submit("ann", "b", 1)
    # A Player item without its name is an inconsistency the service cannot explain.
    await api.db.client.update_item(
        TableName=api.db.table,
        Key=serialize(PLAYER.key_attributes(player_id="ann")),
        UpdateExpression="REMOVE #name",
        ExpressionAttributeNames={"#name": "name"},
    )
    caplog.set_level(logging.ERROR, logger="leaderboard.graphql")
    response = await api.http.post(
        "/graphql",
        json={
            # gamesPlayed: the page reads its players (the name alone comes with the entry).
            "query": '{ leaderboard(id: "b") { topScores { edges { node { player { id '
            "gamesPlayed } } } } } }"
        },
        headers={"X-Request-Id": "req-123"},
    )
    body = await response.json()
    assert response.headers["X-Request-Id"] == "req-123"
    error = body["errors"][0]
    assert error["message"] == "Internal server error (request req-123)"
    assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR", "requestId": "req-123"}
    assert "Traceback" not in json.dumps(body)
    assert "ValidationError" not in json.dumps(body)
    logged = [r for r in caplog.records if getattr(r, "requestId", None) == "req-123"]
    assert logged
    assert logged[0].exc_info is not None


def test_a_cold_check_of_a_valid_document_never_hashes_a_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A node's hash is its whole subtree's (graphql-core), so a check keying anything by a
    node would spend time growing with the document at each look-up: the parser, the
    structural limits and the rules' fast path key by names and identities only."""
    from graphql.language.ast import Node

    from bench.validation.documents import aliased_boards
    from edge.schema import GRAPHQL_SCHEMA
    from edge.validation import check_document

    def refuse(node: Node) -> int:
        raise AssertionError(f"hashed a {type(node).__name__}")

    classes = [Node]
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        if "__hash__" in vars(cls):
            monkeypatch.setattr(cls, "__hash__", refuse)
    fast = STATS.fast
    checked = check_document(GRAPHQL_SCHEMA, aliased_boards(1000))
    assert checked.errors == ()
    assert checked.tokens == 1000
    assert STATS.fast == fast + 1
