"""Every failure of Redis (a full connection pool, a refused connection, a server that does
not answer) falls back to the table's COUNTs: ranks stay exact, the request's log line counts
the fallback, and nothing surfaces as an error."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from edge.app_keys import RANK_INDEX
from leaderboard.child_server import reserved_port
from leaderboard.config import Settings
from leaderboard.embedded_redis import EmbeddedRedis
from tests.conftest import Api, Indexed, _serve

RANKS = """query { leaderboard(id: "b") {
    topScores(first: 10) { edges { node { rank score player { id } } } }
    around(playerId: "p3", before: 1, after: 1) { rank score { player { id } } } }
    player(id: "p1") { rank(leaderboardId: "b") { rank total } } }"""

SCORES = {"p0": 50, "p1": 40, "p2": 40, "p3": 30, "p4": 20, "p5": 10}
EXPECTED = {
    "leaderboard": {
        "topScores": {
            "edges": [
                {"node": {"rank": 1, "score": 50, "player": {"id": "p0"}}},
                {"node": {"rank": 2, "score": 40, "player": {"id": "p1"}}},
                {"node": {"rank": 2, "score": 40, "player": {"id": "p2"}}},
                {"node": {"rank": 4, "score": 30, "player": {"id": "p3"}}},
                {"node": {"rank": 5, "score": 20, "player": {"id": "p4"}}},
                {"node": {"rank": 6, "score": 10, "player": {"id": "p5"}}},
            ]
        },
        "around": [
            {"rank": 2, "score": {"player": {"id": "p2"}}},
            {"rank": 4, "score": {"player": {"id": "p3"}}},
            {"rank": 5, "score": {"player": {"id": "p4"}}},
        ],
    },
    "player": {"rank": {"rank": 2, "total": 6}},
}


async def _fill(api: Api) -> None:
    await api.create_board("b")
    for player, score in SCORES.items():
        await api.create_player(player)
        assert (await api.submit(player, "b", score))["errors"] == []


async def _read(api: Api, caplog: pytest.LogCaptureFixture) -> tuple[dict[str, Any], int]:
    """The ranks query's answer and the fallbacks its log line counts."""
    caplog.set_level(logging.INFO, logger="leaderboard.access")
    caplog.clear()
    api.reset_calls()
    body = await api.raw(RANKS)
    [line] = [r for r in caplog.records if r.name == "leaderboard.access"]
    fallbacks: int = line.__dict__["rankIndexFallbacks"]
    return body, fallbacks


async def test_a_full_connection_pool_falls_back_to_count(
    indexed: Indexed, caplog: pytest.LogCaptureFixture
) -> None:
    api = indexed.api
    await _fill(api)
    await indexed.projector.drain()

    # With the pool free, the index answers: no COUNT Query, no fallback.
    body, fallbacks = await _read(api, caplog)
    assert "errors" not in body
    assert body["data"] == EXPECTED
    assert fallbacks == 0
    from_index = api.calls.get("Query", 0)

    # A pool of one connection, held elsewhere: every read gets MaxConnectionsError.
    pool = indexed.index.redis.connection_pool
    limit = pool.max_connections
    pool.max_connections = 1
    held = await pool.get_connection()  # type: ignore[no-untyped-call]
    try:
        body, fallbacks = await _read(api, caplog)
    finally:
        await pool.release(held)
        pool.max_connections = limit
    assert "errors" not in body
    assert body["data"] == EXPECTED
    assert fallbacks >= 2  # the top list's ranks, the player's rank, the window's
    # The table counted instead: more Queries than the index needed.
    assert api.calls["Query"] > from_index
    warned = [r for r in caplog.records if r.name == "resolvers.rank_source"]
    assert {r.__dict__["error"] for r in warned} == {"MaxConnectionsError"}


async def test_a_refused_connection_falls_back_to_count(
    settings: Settings, graphiql_assets: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with reserved_port("127.0.0.1") as closed_port:  # nothing listens there, and nothing else can
        unreachable = replace(settings, redis_url=f"redis://127.0.0.1:{closed_port}/0")
        async with _serve(unreachable, graphiql_assets) as api:
            await _fill(api)
            body, fallbacks = await _read(api, caplog)
    assert "errors" not in body
    assert body["data"] == EXPECTED
    assert fallbacks >= 2
    warned = [r for r in caplog.records if r.name == "resolvers.rank_source"]
    assert {r.__dict__["error"] for r in warned} == {"ConnectionError"}


async def test_a_redis_that_does_not_answer_holds_no_request(
    settings: Settings, graphiql_assets: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A paused server accepts connections and never answers: each read gives up after the
    client's socket timeout (1 s by default) and the table answers."""
    with EmbeddedRedis() as server:
        async with _serve(replace(settings, redis_url=server.url), graphiql_assets) as api:
            await _fill(api)
            index = api.http.app[RANK_INDEX]
            # Connect first, then pause every client of the server for longer than the test.
            await index.redis.ping()
            await index.redis.execute_command("CLIENT", "PAUSE", "60000", "ALL")
            body, fallbacks = await _read(api, caplog)
    assert "errors" not in body
    assert body["data"] == EXPECTED
    assert fallbacks >= 2
    warned = [r for r in caplog.records if r.name == "resolvers.rank_source"]
    assert {r.__dict__["error"] for r in warned} == {"TimeoutError"}


def test_the_rank_index_timeout_is_one_second_by_default(settings: Settings) -> None:
    assert settings.limits.rank_index_timeout == 1.0
