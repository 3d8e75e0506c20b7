"""One address, one identity: spellings a person reads as the same e-mail address belong to
one player, and rows stored under the older lower-cased-only form are still found."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from dynamo.emails import legacy_email, normalize_email
from dynamo.errors import LeaderboardError
from dynamo.items import serialize
from dynamo.players import EMAIL_CLAIM, PLAYER, PlayerItem
from tests.conftest import API_KEYS, Api
from tests.scan import scan_items

CREATE = """mutation($i: CreatePlayerInput!) { createPlayer(input: $i) {
    player { id email } errors { code message field } } }"""
BY_EMAIL = """query($e: String!) { playerByEmail(email: $e) { id email } }"""

FULLWIDTH_CASE = "\uff43\uff41\uff53\uff45"  # "case" in fullwidth letters
SAME_ADDRESSES = [
    # (how the first account is spelled, how the second one is, the stored form)
    ("case@x.com", f"{FULLWIDTH_CASE}@x.com", "case@x.com"),
    ("CASE@X.COM", "case\uff20x.com", "case@x.com"),  # fullwidth at sign
    ("jose\u0301@x.com", "jos\u00e9@x.com", "jos\u00e9@x.com"),  # decomposed vs composed
    ("ann@x.com", "an\u200bn@x.com", "ann@x.com"),  # zero-width space
    ("ann@x.com", "\ufeffa\u00adnn\u2060@x.com", "ann@x.com"),  # BOM, soft hyphen, joiner
    ("ann@x.com", "ann@x.com.", "ann@x.com"),  # trailing dot of the domain
    ("ann@B\u00fccher.example", "ann@xn--bcher-kva.example", "ann@xn--bcher-kva.example"),
    ("ann@b\u00fccher.example.", "ANN@B\u00dcCHER.EXAMPLE", "ann@xn--bcher-kva.example"),
]


async def _create(api: Api, player_id: str, email: str) -> dict[str, Any]:
    data = await api.gql(CREATE, {"i": {"id": player_id, "name": player_id, "email": email}})
    payload: dict[str, Any] = data["createPlayer"]
    return payload


@pytest.mark.parametrize(("first", "second", "stored"), SAME_ADDRESSES)
async def test_spellings_of_one_address_are_one_player(
    api: Api, first: str, second: str, stored: str
) -> None:
    created = await _create(api, "one", first)
    assert created["errors"] == []
    assert created["player"] == {"id": "one", "email": stored}

    before = await scan_items(api.db)
    again = await _create(api, "two", second)
    assert again["player"] is None
    assert [(e["code"], e["field"]) for e in again["errors"]] == [("EMAIL_TAKEN", "email")]
    assert await scan_items(api.db) == before

    for spelling in (first, second, stored):
        api.reset_calls()
        found = await api.gql(BY_EMAIL, {"e": spelling})
        assert found["playerByEmail"] == {"id": "one", "email": stored}
        assert api.calls == {"Query": 1}  # the normalised form is found first


@pytest.mark.parametrize(
    "bad",
    [
        "no-at-sign",
        "a@b",  # no dot in the domain
        "\u200b@x.com",  # nothing left of the local part
        "a@x..com",  # an empty label
        "a@-x.com",  # a label starting with a hyphen
        "a@x_y.com",  # not a host name
        "a@" + "x" * 64 + ".com",  # a label over 63 characters
        "a" * 65 + "@x.com",  # a local part over 64 characters
    ],
)
async def test_what_is_not_an_address_after_normalisation_is_refused(api: Api, bad: str) -> None:
    with pytest.raises(LeaderboardError) as refused:
        normalize_email(bad)
    assert refused.value.code == "INVALID_EMAIL"
    api.reset_calls()
    body = await api.raw(CREATE, {"i": {"id": "p", "name": "p", "email": bad}})
    assert [(e["code"], e["field"]) for e in body["data"]["createPlayer"]["errors"]] == [
        ("INVALID_EMAIL", "email")
    ]
    assert api.calls == {}


async def test_a_lone_surrogate_is_refused_below_and_at_the_edge(api: Api) -> None:
    """Normalisation refuses an address with a lone surrogate; over HTTP the request never
    gets that far: text that is not Unicode is a 400, and nothing is read or written."""
    bad = "a@\ud800.com"
    with pytest.raises(LeaderboardError) as refused:
        normalize_email(bad)
    assert refused.value.code == "INVALID_EMAIL"
    api.reset_calls()
    response = await api.http.post(
        "/graphql",
        json={"query": CREATE, "variables": {"i": {"id": "p", "name": "p", "email": bad}}},
        headers={"Authorization": f"Bearer {API_KEYS[0]}"},
    )
    assert response.status == 400
    assert "not valid Unicode" in await response.text()
    assert api.calls == {}


async def _write_legacy_player(api: Api, player_id: str, email: str) -> str:
    """A player as createPlayer stored it before addresses were normalised: its item and its
    claim keyed by the trimmed, lower-cased address."""
    key = legacy_email(email)
    assert key is not None
    assert key != normalize_email(email)
    at = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
    player = PlayerItem(
        player_id=player_id, name=player_id, email=key, created_at=at, updated_at=at
    )
    items = [PLAYER.item(player), {**EMAIL_CLAIM.keys(email=key), "playerId": player_id}]
    for item in items:
        await api.db.client.put_item(TableName=api.db.table, Item=serialize(item))
    return key


@pytest.mark.parametrize(
    "email",
    [
        f"{FULLWIDTH_CASE}@x.com",
        "Ann@X.com.",
        "an\u200bn@x.com",
        "ann@B\u00fccher.example",
    ],
)
async def test_a_legacy_row_is_found_and_blocks_a_new_account(api: Api, email: str) -> None:
    key = await _write_legacy_player(api, "old", email)

    # Looked up as it was written: the normalised form first, then the legacy one.
    api.reset_calls()
    found = await api.gql(BY_EMAIL, {"e": email})
    assert found["playerByEmail"] == {"id": "old", "email": key}
    assert api.calls == {"Query": 2}

    # A new account with the same spelling is refused in its transaction, writing nothing.
    before = await scan_items(api.db)
    api.reset_calls()
    again = await _create(api, "new", email)
    assert again["player"] is None
    assert [(e["code"], e["field"]) for e in again["errors"]] == [("EMAIL_TAKEN", "email")]
    assert api.calls == {"TransactWriteItems": 1}
    assert await scan_items(api.db) == before


async def test_a_new_address_without_a_legacy_form_costs_one_transaction(api: Api) -> None:
    api.reset_calls()
    created = await _create(api, "p", "p@x.example")
    assert created["errors"] == []
    assert api.calls == {"TransactWriteItems": 1}
    api.reset_calls()
    missing = await api.gql(BY_EMAIL, {"e": "Nobody@Example.com."})
    assert missing["playerByEmail"] is None
    assert api.calls == {"Query": 2}  # the normalised form, then the legacy one
    api.reset_calls()
    missing = await api.gql(BY_EMAIL, {"e": "nobody@example.com"})
    assert missing["playerByEmail"] is None
    assert api.calls == {"Query": 1}  # both forms are the same
