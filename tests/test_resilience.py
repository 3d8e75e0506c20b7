"""A backend that goes away: fast typed failures, no lost writes, recovery without restart."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.players import PLAYER
from dynamo.resilience import CircuitBreaker
from dynamo.sessions import SESSION
from leaderboard.app import BREAKER
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.child_server import reserved_port
from leaderboard.config import Settings, default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from tests.conftest import API_KEYS, Api, _serve
from tests.scan import scan_items


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_circuit_opens_after_failures_probes_after_cooldown_and_closes() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(threshold=3, cooldown=2.0, clock=clock)
    for _ in range(2):
        breaker._failed()
    assert breaker.state == "closed"
    breaker._before()  # still lets calls through
    breaker._failed()
    assert breaker.state == "open"
    with pytest.raises(LeaderboardError) as refused:
        breaker._before()
    assert refused.value.code is ErrorCode.BACKEND_UNAVAILABLE
    clock.now = 2.5
    breaker._before()  # the probe goes through...
    assert breaker.state == "half-open"
    with pytest.raises(LeaderboardError):
        breaker._before()  # ...alone
    breaker._failed()  # the probe failed: open for another cooldown
    assert breaker.state == "open"
    clock.now = 3.0
    with pytest.raises(LeaderboardError):
        breaker._before()
    clock.now = 5.0
    breaker._before()
    breaker._succeeded()
    assert breaker.state == "closed"
    breaker._before()


@dataclass
class Fragile:
    """A service on a DynamoDB Local of its own, which the test stops and starts; ``setup``
    is a second service on the same table with the tests' patient limits, for the test's
    setup."""

    api: Api
    setup: Api
    local: EmbeddedDynamoDB


@pytest.fixture
async def fragile(settings: Settings, tmp_path: Path) -> AsyncIterator[Fragile]:
    # A fixed port, held for the test: the restarted server must be where the service
    # expects it, and no other process may take the port while the server is down.
    with reserved_port("127.0.0.1") as port:
        local = EmbeddedDynamoDB(default_cache_dir(), data_dir=tmp_path / "ddb", port=port)
        local.start()
        try:
            # A short deadline, so that the test sees fail-fast behaviour in seconds.
            own = replace(settings, endpoint_url=local.endpoint_url)
            hasty = replace(own, limits=replace(settings.limits, request_deadline=4.0))
            async with _serve(hasty, None) as api, _serve(own, None) as setup:
                yield Fragile(api, setup, local)
        finally:
            local.stop()


WRITE = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    session { id } errors { code } } }"""


@dataclass
class Writer:
    """Plays of one player sent one after another, each with its own submissionId, while the
    database comes and goes; what each got back is kept."""

    api: Api
    player: str
    plays: list[tuple[int, str, str]] = field(default_factory=list)
    """(score, submissionId, the session id or the error code)"""
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def play(self, score: int, submission_id: str) -> str:
        response = await self.api.http.post(
            "/graphql",
            json={
                "query": WRITE,
                "variables": {
                    "i": {
                        "playerId": self.player,
                        "leaderboardId": "b",
                        "gameId": "g",
                        "score": score,
                        "submissionId": submission_id,
                    }
                },
            },
            headers={"Authorization": f"Bearer {API_KEYS[0]}"},
        )
        body = await response.json()
        payload = (body.get("data") or {}).get("submitScore")
        if payload and not payload["errors"]:
            return str(payload["session"]["id"])
        errors = payload["errors"] if payload else body["errors"]
        return str(errors[0].get("code") or errors[0]["extensions"]["code"])

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            submission_id = str(uuid.uuid4())
            score = len(self.plays) + 1
            result = await self.play(score, submission_id)
            async with self.changed:
                self.plays.append((score, submission_id, result))
                self.changed.notify_all()
            await asyncio.sleep(0.05)

    async def wait_acknowledged(self, count: int) -> None:
        async with asyncio.timeout(30), self.changed:
            await self.changed.wait_for(lambda: self.acknowledged() >= count)

    def acknowledged(self) -> int:
        return sum(1 for _, _, result in self.plays if result not in _CODES)


_CODES = {"BACKEND_UNAVAILABLE", "OUTCOME_UNKNOWN"}


@pytest.mark.slow
async def _answering(endpoint_url: str, table: str) -> None:
    """Wait until the DynamoDB Local at ``endpoint_url`` answers a read of ``table`` within
    4 s (at most 5 minutes)."""
    client: Any = botocore.session.get_session().create_client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=LOCAL_CREDENTIALS[0],
        aws_secret_access_key=LOCAL_CREDENTIALS[1],
        config=Config(read_timeout=4, connect_timeout=1, retries={"total_max_attempts": 1}),
    )
    pk, sk = PLAYER.key(player_id="ann")
    key = {"pk": {"S": pk}, "sk": {"S": sk}}
    deadline = time.monotonic() + 300
    try:
        while True:
            try:
                await asyncio.to_thread(client.get_item, TableName=table, Key=key)
                return
            except (BotoCoreError, ClientError):
                assert time.monotonic() < deadline, "DynamoDB Local did not come back"
                await asyncio.sleep(0.5)
    finally:
        client.close()


async def test_backend_down_fails_fast_and_recovers_by_itself(fragile: Fragile) -> None:
    api, local = fragile.api, fragile.local
    # Set up through the patient service: a cold DynamoDB Local on a loaded machine may take
    # longer than the short deadline to answer its first writes.
    await fragile.setup.create_player("ann")
    await fragile.setup.create_player("bob")
    await fragile.setup.create_board("b")
    acknowledged = [(await fragile.setup.submit("ann", "b", n))["session"]["id"] for n in range(5)]

    async def post(query: str) -> tuple[int, dict[str, Any]]:
        response = await api.http.post(
            "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {API_KEYS[0]}"}
        )
        return response.status, await response.json()

    # Bob keeps playing throughout; the database goes away in the middle of his run.
    writer = Writer(api, "bob")
    stop = asyncio.Event()
    writing = asyncio.create_task(writer.run(stop))
    await writer.wait_acknowledged(5)
    # The service's clock held from here on: an open circuit stays open until the test moves
    # the clock on by its cooldown, however slowly the machine goes.
    api.clock.hold()
    breaker = api.http.app[BREAKER]
    # Stopped with SIGTERM while bob's plays are in flight. (SIGKILL is no fair test of the
    # service: DynamoDB Local answers a write a few milliseconds before its SQLite commit, and
    # a kill in that window loses a write it acknowledged, whoever the client.)
    local.stop()
    failures: list[dict[str, Any]] = []
    for n in range(8):
        status, body = await post('{ player(id: "ann") { gamesPlayed } }')
        assert status in (200, 503)
        failures += [{**e, "code": e["extensions"]["code"]} for e in body["errors"]]
        status, write = await post(
            'mutation { submitScore(input: {playerId: "ann", leaderboardId: "b", gameId: "g", '
            f"score: {100 + n}}}) {{ errors {{ code message }} }} }}"
        )
        assert status in (200, 503)
        payload = (write.get("data") or {}).get("submitScore") or {}
        failures += payload.get("errors", [])
        failures += [{**e, "code": e["extensions"]["code"]} for e in write.get("errors", [])]
    assert {f["code"] for f in failures} == {"BACKEND_UNAVAILABLE"}
    assert breaker.state == "open"
    # Failing fast: once the circuit has opened (its threshold of failed calls reached,
    # this test's and bob's), every request is refused at once by it instead of waiting for
    # the database's retries and timeouts.
    refused = ["circuit open" in f["message"] for f in failures]
    assert True in refused, failures
    assert all(refused[refused.index(True) :]), failures
    status, body = await post('{ leaderboard(id: "b") { name } }')
    [error] = body["errors"]
    assert (error["extensions"]["code"], "circuit open" in error["message"]) == (
        "BACKEND_UNAVAILABLE",
        True,
    )
    health = await api.http.get("/healthz")
    assert health.status == 503
    # The process itself is alive: a load balancer or orchestrator asking /livez keeps it.
    live = await api.http.get("/livez")
    assert live.status == 200
    assert (await live.json())["status"] == "alive"

    local.start()  # same port, same data folder
    # A cold DynamoDB Local on a loaded machine may take long to answer its first reads
    # within the request's 4 s: wait until it answers one directly (however long that
    # takes), then give the service a minute to recover by itself: at each try the clock
    # moves on by the cooldown, and the circuit lets a probe through.
    await _answering(local.endpoint_url, api.db.table)
    deadline = time.monotonic() + 60
    while True:
        api.clock.advance(breaker.cooldown)
        status, body = await post(
            '{ player(id: "ann") { gamesPlayed sessions(first: 20) { edges { node { id } } } } }'
        )
        if status == 200 and "errors" not in body:
            break
        assert time.monotonic() < deadline, body
        await asyncio.sleep(0.5)
    player = body["data"]["player"]
    # Every acknowledged play is there exactly once; none of the refused ones is.
    assert player["gamesPlayed"] == 5
    assert sorted(e["node"]["id"] for e in player["sessions"]["edges"]) == sorted(acknowledged)
    assert breaker.state == "closed"
    assert (await api.http.get("/healthz")).status == 200

    before = writer.acknowledged()
    await writer.wait_acknowledged(before + 3)  # bob plays on, with the same service
    stop.set()
    await writing
    results = Counter("ok" if r not in _CODES else r for _, _, r in writer.plays)
    assert results["BACKEND_UNAVAILABLE"] > 0, results  # refused while it was down
    await _check_plays(api, writer)
    # A play whose outcome the service could not know is recorded once when sent again.
    for n, (score, submission_id, result) in enumerate(writer.plays):
        if result == "OUTCOME_UNKNOWN":
            writer.plays[n] = (score, submission_id, await writer.play(score, submission_id))
    assert writer.acknowledged() == len(writer.plays) - results["BACKEND_UNAVAILABLE"]
    await _check_plays(api, writer)


async def _check_plays(api: Api, writer: Writer) -> None:
    """The table (read directly) holds every acknowledged play of the writer exactly once,
    no refused one, and the player's statistics count exactly the plays recorded."""
    items = await scan_items(api.db)
    recorded = [
        (int(i["score"]), i["sessionId"])
        for i in items
        if SESSION.holds(i) and i["playerId"] == writer.player
    ]
    sessions = dict(recorded)
    assert len(sessions) == len(recorded)  # no play twice
    for score, _, result in writer.plays:
        if result not in _CODES:
            assert sessions.get(score) == result, (score, result)
        elif result == "BACKEND_UNAVAILABLE":
            assert score not in sessions, score
    stats = next(i for i in items if (i["pk"], i["sk"]) == PLAYER.key(player_id=writer.player))
    assert (stats["gamesPlayed"], stats["lifetimeScore"]) == (len(sessions), sum(sessions))
