"""Fuzzing of the four mutations (createPlayer, createLeaderboard, createLeaderboardFamily,
submitScore): every input gets a typed answer, a refused input writes nothing, the table's keys
stay well formed, and without a valid API key nothing is written at all."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dynamo.emails import normalize_email
from edge.cost_model import MAX_COST
from tests.conftest import API_KEYS, PATIENT
from tests.fuzz.answers import (
    PRE_EXECUTION,
    assert_alive,
    assert_keys_well_formed,
    by_key,
    graphql,
)
from tests.fuzz.inputs import BOARDS, FAMILIES, GAME, PLAYERS, fuzz, metadata_documents, ulids
from tests.fuzz.operations import (
    CREATE_BOARD,
    CREATE_FAMILY,
    CREATE_PLAYER,
    ENTITY,
    MUTATIONS,
    SUBMIT,
    board_inputs,
    family_inputs,
    player_inputs,
    submit_inputs,
)
from tests.fuzz.world import World, world_fixture  # noqa: F401  (the world fixture)
from tests.scan import scan_items


async def _fuzz_mutation(world: World, name: str, document: str, value: Any) -> dict[str, Any]:
    """Send one mutation with a valid key: a typed answer, and nothing written on error."""
    api = world.api
    before = await world.scan()
    body = await graphql(api, document, {"i": value})
    after = by_key(await assert_keys_well_formed(api))
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
        assert email == normalize_email(value["email"])
        assert normalize_email(email) == email  # the stored form is its own normal form


@fuzz(60)
@given(value=board_inputs)
async def test_create_leaderboard_inputs(world: World, value: Any) -> None:
    await _fuzz_mutation(world, "createLeaderboard", CREATE_BOARD, value)


@fuzz(60)
@given(value=family_inputs)
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


@fuzz(60)
@given(metadata=metadata_documents, submission=st.one_of(st.none(), ulids))
async def test_submit_score_metadata(world: World, metadata: Any, submission: str | None) -> None:
    """A play valid but for its metadata, on a board, an INCREMENT board and a family's:
    refused whole (INVALID_METADATA at metadata, nothing written) or recorded with the
    document read back as sent."""
    value = {
        "playerId": PLAYERS[0],
        "gameId": GAME,
        "score": 1,
        "leaderboardId": BOARDS[0],
        "leaderboardIds": [BOARDS[2]],
        "familyIds": [FAMILIES[0]],
        "metadata": metadata,
        "submissionId": submission,
    }
    body = await _fuzz_mutation(world, "submitScore", SUBMIT, value)
    payload = (body.get("data") or {}).get("submitScore")
    if payload is None:
        return
    if payload["errors"]:
        assert payload["errors"] == [
            {
                "code": "INVALID_METADATA",
                "message": payload["errors"][0]["message"],
                "field": "metadata",
            }
        ], payload
    else:
        assert isinstance(metadata, dict | None), payload
        # As the server read it: a pair of surrogates in the sent JSON is one character.
        assert payload["session"]["metadata"] == json.loads(json.dumps(metadata))


def _accepted(authorization: str | None) -> bool:
    """Whether the service takes this Authorization header as a valid key."""
    if authorization is None or authorization[:7].lower() != "bearer ":
        return False
    return authorization[7:].strip() in API_KEYS


FULL_REFILL = PATIENT.anonymous_cost_burst / PATIENT.anonymous_cost_per_second
"""Seconds in which an anonymous caller regains its whole allowance of cost points."""

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
    # The service's clock moves on past a whole refill of the anonymous allowance, which
    # covers the costliest document there is: each example's caller starts with all of it,
    # so that what refuses it is the missing key, never its allowance.
    assert PATIENT.anonymous_cost_burst >= MAX_COST
    api.clock.advance(FULL_REFILL)
    before = await world.scan()
    headers = {"Authorization": authorization} if authorization is not None else {}
    body = await graphql(api, document, {"i": value}, key=None, headers=headers)
    if body is not None:
        assert body.get("data") is None, body
        codes = {e["extensions"]["code"] for e in body["errors"]}
        assert codes <= {"UNAUTHENTICATED", *PRE_EXECUTION}, body
    assert by_key(await scan_items(api.db)) == before
    await assert_alive(api)
    world.items = before
