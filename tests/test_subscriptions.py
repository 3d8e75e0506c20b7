"""Live leaderboards over graphql-transport-ws, with real WebSocket clients."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from aiohttp import ClientWebSocketResponse

from dynamo.items import serialize
from dynamo.players import PLAYER
from edge.app_keys import BROKER
from leaderboard.config import Settings
from tests.conftest import WAIT, Api, _serve, each_layout

WATCH = """subscription { leaderboardChanged(leaderboardId: "b", first: 3) {
    leaderboardId entries { rank score player { id } } } }"""


@asynccontextmanager
async def _subscribed(api: Api, query: str = WATCH) -> AsyncIterator[ClientWebSocketResponse]:
    async with api.http.ws_connect("/graphql", protocols=("graphql-transport-ws",)) as ws:
        await ws.send_json({"type": "connection_init"})
        assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": query}})
        yield ws


async def _next(ws: ClientWebSocketResponse, wait: float = WAIT) -> list[tuple[str, int, int]]:
    message: dict[str, Any] = await ws.receive_json(timeout=wait)
    assert message["type"] == "next", message
    top = message["payload"]["data"]["leaderboardChanged"]
    assert top["leaderboardId"] == "b"
    return [(e["player"]["id"], e["score"], e["rank"]) for e in top["entries"]]


async def _silent(ws: ClientWebSocketResponse, seconds: float = 0.7) -> bool:
    """True when nothing at all arrives within ``seconds``."""
    try:
        await ws.receive(timeout=seconds)
    except TimeoutError:
        return True
    return False


@each_layout
async def test_two_clients_see_changes_to_the_top_and_only_those(api: Api) -> None:
    for p in ("ann", "bob", "cat", "dan", "eve"):
        await api.create_player(p)
    await api.create_board("b")
    for p, s in (("ann", 50), ("bob", 40), ("cat", 30), ("dan", 10)):
        await api.submit(p, "b", s)

    async with _subscribed(api) as one, _subscribed(api) as two:
        start = [("ann", 50, 1), ("bob", 40, 2), ("cat", 30, 3)]
        assert await _next(one) == start
        assert await _next(two) == start

        # eve enters at 45: the top 3 changes, both clients hear of it.
        assert (await api.submit("eve", "b", 45))["improved"]
        changed = [("ann", 50, 1), ("eve", 45, 2), ("bob", 40, 3)]
        assert await _next(one) == changed
        assert await _next(two) == changed

        # dan improves from 10 to 20: still 5th, so neither client hears anything; a worse
        # play by ann changes nothing at all.
        assert (await api.submit("dan", "b", 20))["improved"]
        assert not (await api.submit("ann", "b", 1))["improved"]
        assert all(await asyncio.gather(_silent(one), _silent(two)))

        # A tie with the leader, attained later, lists second and shares rank 1.
        await api.submit("cat", "b", 50)
        tied = [("ann", 50, 1), ("cat", 50, 1), ("eve", 45, 3)]
        assert await _next(one) == tied
        assert await _next(two) == tied


async def test_unknown_board_and_bad_arguments_end_the_subscription_with_an_error(
    api: Api,
) -> None:
    for query, code in [
        (
            'subscription { leaderboardChanged(leaderboardId: "nope") { leaderboardId } }',
            "LEADERBOARD_NOT_FOUND",
        ),
        (
            'subscription { leaderboardChanged(leaderboardId: "b", first: 1000) { leaderboardId }'
            " }",
            "INVALID_ARGUMENT",
        ),
    ]:
        async with _subscribed(api, query) as ws:
            message = await ws.receive_json(timeout=WAIT)
            assert message["type"] in ("next", "error"), message
            errors = (
                message["payload"] if message["type"] == "error" else message["payload"]["errors"]
            )
            assert errors[0]["extensions"]["code"] == code, message


async def test_closing_a_subscription_stops_listening(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    await api.submit("ann", "b", 1)
    broker = api.http.app[BROKER]
    async with _subscribed(api) as ws:
        await _next(ws)
        assert broker.listening("b") == 1
    async with asyncio.timeout(WAIT):
        while broker.listening("b"):  # noqa: ASYNC110 - a count of the broker's, not an event
            await asyncio.sleep(0.02)


@each_layout
async def test_a_push_leaves_out_an_entry_whose_player_was_erased_meanwhile(api: Api) -> None:
    """The Player item is what an erasure deletes last (resolvers/erased.py): a push that
    reads a top whose player is gone leaves that entry out, ranks the others as the board
    will be once the erasure is done, and goes on."""
    for p in ("ann", "bob", "cat"):
        await api.create_player(p)
    await api.create_board("b")
    for p, s in (("ann", 50), ("bob", 40)):
        await api.submit(p, "b", s)
    async with _subscribed(api) as ws:
        assert await _next(ws) == [("ann", 50, 1), ("bob", 40, 2)]
        await api.db.client.delete_item(
            TableName=api.db.table, Key=serialize(PLAYER.key_attributes(player_id="ann"))
        )
        await api.submit("cat", "b", 30)
        assert await _next(ws) == [("bob", 40, 1), ("cat", 30, 2)]


async def test_a_change_that_sent_no_notice_reaches_subscribers_within_the_refresh(
    settings: Settings,
) -> None:
    """Two instances without a change feed: a play through one sends no notice to the
    other, whose subscriber still shows it once the board has been quiet for the refresh
    period (LEADERBOARD_SUBSCRIPTION_REFRESH_SECONDS)."""
    async with (
        _serve(replace(settings, subscription_refresh_seconds=1), None) as watched,
        _serve(replace(settings, subscription_refresh_seconds=0), None) as other,
    ):
        for p in ("ann", "bob"):
            await watched.create_player(p)
        await watched.create_board("b")
        await watched.submit("ann", "b", 50)
        async with _subscribed(watched) as ws:
            assert await _next(ws) == [("ann", 50, 1)]
            await other.submit("bob", "b", 60)
            # Pushed by the refresh (1 s of quiet, checked every second), or never.
            assert await _next(ws) == [("bob", 60, 1), ("ann", 50, 2)]
            # A board with nothing new pushes nothing, refresh after refresh.
            assert await _silent(ws, 2.5)
