"""Abuse: load that one caller can make. Overload is shed with 503 and Retry-After rather than
spread over everyone; a request that reaches its deadline stops calling the database and does
not count against the backend's health; heavy documents do not starve small ones."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from graphql import parse

from edge.cost_model import MAX_COST
from edge.cost_walk import document_cost
from edge.schema import GRAPHQL_SCHEMA
from faultproxy import Fault, FaultProxy, Rule
from leaderboard.app import ADMISSION, BREAKER
from leaderboard.config import Settings
from tests.conftest import API_KEYS, Api, _serve

SMALL = '{ player(id: "p") { name } }'


async def post(api: Api, query: str, *, key: bool = False) -> tuple[int, dict[str, str], Any]:
    headers = {"Authorization": f"Bearer {API_KEYS[0]}"} if key else {}
    response = await api.http.post("/graphql", json={"query": query}, headers=headers)
    return response.status, dict(response.headers), await response.json()


async def healthz(api: Api) -> tuple[int, Any]:
    response = await api.http.get("/healthz")
    return response.status, await response.json()


@pytest.fixture
async def narrow(settings: Settings, proxy: FaultProxy) -> AsyncIterator[Api]:
    """A service with two places for operations, a short wait for one, behind the proxy."""
    limits = replace(
        settings.limits, max_concurrent_requests=2, queue_timeout=0.5, request_deadline=30.0
    )
    async with _serve(replace(settings, endpoint_url=proxy.url, limits=limits), None) as api:
        yield api


async def test_overload_is_shed_with_retry_after_while_healthz_answers(
    narrow: Api, proxy: FaultProxy
) -> None:
    await narrow.create_player("p")
    release = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, "GetItem", released=release))
    held = [asyncio.create_task(post(narrow, SMALL)) for _ in range(2)]
    try:
        await asyncio.wait_for(proxy.wait_received("GetItem", 2), timeout=30)
        # Both places are taken: the next operation waits half a second, then is refused
        # without reaching the database.
        status, headers, body = await post(narrow, SMALL)
        assert status == 503
        assert headers["Retry-After"] == "1"
        assert body["data"] is None
        [error] = body["errors"]
        assert error["extensions"]["code"] == "SERVICE_OVERLOADED"
        assert proxy.received["GetItem"] == 2
        assert narrow.http.app[ADMISSION].refused == 1
        # The health check does not queue behind operations.
        assert (await healthz(narrow))[0] == 200
        assert not any(task.done() for task in held)
    finally:
        release.set()
    for status, _, body in await asyncio.gather(*held):
        assert (status, body["data"]) == (200, {"player": {"name": "p"}})
    assert (await post(narrow, SMALL))[0] == 200


@pytest.fixture
async def hasty(settings: Settings, proxy: FaultProxy) -> AsyncIterator[Api]:
    """A service whose requests have a one-second budget, behind the proxy. Tests set up
    their data through the patient ``api`` on the same table, not under that budget."""
    limits = replace(settings.limits, request_deadline=1.0)
    async with _serve(replace(settings, endpoint_url=proxy.url, limits=limits), None) as api:
        yield api


async def test_deadlines_do_not_open_the_circuit(api: Api, hasty: Api, proxy: FaultProxy) -> None:
    await api.create_player("p")
    breaker = hasty.http.app[BREAKER]
    release = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, "GetItem", released=release))
    try:
        # Twice as many requests run out of time as backend failures would open the circuit.
        for _ in range(2 * breaker.threshold):
            status, headers, body = await post(hasty, SMALL)
            assert (status, headers["Retry-After"]) == (503, "1")
            [error] = body["errors"]
            assert error["extensions"]["code"] == "BACKEND_UNAVAILABLE"
            assert "ran out of time" in error["message"]
        assert breaker.state == "closed"
        status, health = await healthz(hasty)
        assert (status, health["circuit"]) == (200, "closed")
    finally:
        release.set()
    # DynamoDB was healthy all along: the next request is answered, not failed fast.
    proxy.clear()
    assert (await post(hasty, SMALL))[2]["data"] == {"player": {"name": "p"}}


async def test_a_request_at_its_deadline_makes_no_more_calls(
    api: Api, hasty: Api, proxy: FaultProxy
) -> None:
    await api.create_board("b")
    for n in range(10):
        await api.create_player(f"p{n}")
        await api.submit(f"p{n}", "b", n)
    # Each database call takes 0.3 s: the document needs about six rounds of them, more than
    # its budget of one second.
    deep = """{ leaderboard(id: "b") { topScores(first: 10) { edges { node { player {
        sessions(first: 1) { edges { node { id } } }
        scores(first: 1) { edges { node { leaderboard { name } } } } } } } } } }"""
    proxy.inject(Rule(Fault.DELAY, delay=0.3))
    status, _, body = await post(hasty, deep)
    assert status == 503
    assert body["errors"][0]["extensions"]["code"] == "BACKEND_UNAVAILABLE"
    sent = sum(proxy.received.values())
    assert 0 < sent < 30
    # Whatever of the request was still under way makes no call after the answer.
    await asyncio.sleep(1.5)
    assert sum(proxy.received.values()) == sent
    proxy.clear()
    assert (await healthz(hasty))[0] == 200


ENTRIES = """topScores(first: 100) { edges { node { score rank player { name
    scores(first: 100) { edges { node { score } } }
    sessions(first: 100) { edges { node { score } } } } } } }"""
HEAVY = f'{{ a: leaderboard(id: "b") {{ {ENTRIES} }} b: leaderboard(id: "b") {{ {ENTRIES} }} }}'
"""Near the most a document may cost: two pages of 100 entries with each player's boards and
sessions."""


@pytest.mark.slow
async def test_heavy_documents_do_not_starve_small_queries(api: Api) -> None:
    heavy_cost = document_cost(GRAPHQL_SCHEMA, parse(HEAVY), None, {})
    assert MAX_COST // 2 < heavy_cost <= MAX_COST
    await api.create_board("b")
    for n in range(100):
        await api.create_player(f"p{n}" if n else "p")
        await api.submit(f"p{n}" if n else "p", "b", n)

    heavy_done = asyncio.Event()

    async def heavy_loop() -> list[str]:
        outcomes = []
        for _ in range(2):
            status, headers, body = await post(api, HEAVY, key=True)
            if status == 200:
                assert "errors" not in body, body
                outcomes.append("answered")
            else:
                # Shed while the process held as many of them as its capacity takes, or, on
                # a slow machine, cut at the request's time budget: bounded either way.
                assert (status, headers["Retry-After"]) == (503, "1"), body
                error = body["errors"][0]
                code = error["extensions"]["code"]
                assert code == "SERVICE_OVERLOADED" or (
                    code == "BACKEND_UNAVAILABLE" and "ran out of time" in error["message"]
                ), body
                outcomes.append("shed")
        return outcomes

    async def small_loop() -> list[tuple[int, Any]]:
        answers = []
        while not heavy_done.is_set():
            status, _, body = await post(api, SMALL)
            answers.append((status, body.get("data")))
        return answers

    small = asyncio.create_task(small_loop())
    # Four at once, each twice: twice the heavy documents the capacity holds at a time.
    heavy = await asyncio.gather(*(heavy_loop() for _ in range(4)))
    heavy_done.set()
    answers = await small
    # The small query kept being answered, exactly, while the heavy ones ran.
    assert answers
    assert all(answer == (200, {"player": {"name": "p"}}) for answer in answers), answers
    # Each heavy document holds 804 of the 2,000 points: never more than two ran at once.
    assert "answered" in {outcome for outcomes in heavy for outcome in outcomes}
    admission = api.http.app[ADMISSION]
    assert admission.points_in_use == 0
    assert api.http.app[BREAKER].state == "closed"
    assert (await healthz(api))[0] == 200
