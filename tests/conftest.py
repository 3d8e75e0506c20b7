"""Shared fixtures: one DynamoDB Local for the session, a fresh table and app per test."""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from botocore.exceptions import ClientError

from dynamo.db import Db
from dynamo.items import now
from dynamo.metrics import CallCounter
from dynamo.streams import TableStream
from dynamo.table import create_table
from edge.app_keys import DB, RANK_INDEX
from faultproxy import FaultProxy
from leaderboard.app import CALLS, create_app
from leaderboard.backend import LOCAL_CREDENTIALS, open_stream, open_table
from leaderboard.config import Limits, Settings, default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from leaderboard.embedded_redis import EmbeddedRedis
from leaderboard.graphiql import ensure_graphiql_assets
from rankindex.index import RankIndex
from rankindex.projector import Projector

API_KEYS = ("test-key-current", "test-key-next")
ADMIN_KEYS = ("test-admin-key",)
RUNS = Path(__file__).resolve().parent.parent / ".pytest-tmp"
"""Where each run of the suite keeps its temporary files, a folder per run."""
_OWN_TEMP = pytest.StashKey[Path]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Each run of the suite keeps its temporary files to itself: a folder of its own in
    .pytest-tmp/ of the clone (the xdist workers' folders inside it), unless --basetemp names
    one. pytest's own numbered folders in the system's temporary folder are shared by every
    run of the same user, and a run's clean-up of them meets the folders of runs still going.
    The folder is removed when the run passes, kept for a look when it fails."""
    if config.option.basetemp is None and not hasattr(config, "workerinput"):
        RUNS.mkdir(exist_ok=True)
        own = Path(tempfile.mkdtemp(prefix="run-", dir=RUNS))
        config.option.basetemp = str(own)
        config.stash[_OWN_TEMP] = own


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    own = session.config.stash.get(_OWN_TEMP, None)
    if own is not None and exitstatus == 0:
        shutil.rmtree(own, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests (tens of seconds each) first: the two test processes take them while the
    short ones are left to share out, so both processes finish at about the same time."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def dynamodb_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Its log in this run's folder: the download cache may be shared with other runs.
    logs = tmp_path_factory.mktemp("dynamodb-local")
    with EmbeddedDynamoDB(default_cache_dir(), log_dir=logs) as local:
        yield local.endpoint_url


class Clock:
    """The app's clocks in tests. Its "now" (calling it): real time unless set to an instant.
    Its monotonic seconds (:meth:`monotonic`, which measure the service's intervals: see
    ``create_app``): real time until held; a held clock moves only when advanced."""

    def __init__(self) -> None:
        self.frozen: datetime | None = None
        self.held: float | None = None

    def __call__(self) -> datetime:
        return self.frozen if self.frozen is not None else now()

    def set(self, at: datetime | str) -> None:
        self.frozen = datetime.fromisoformat(at) if isinstance(at, str) else at

    def monotonic(self) -> float:
        return self.held if self.held is not None else time.monotonic()

    def hold(self) -> None:
        """Stop the monotonic clock where it is."""
        if self.held is None:
            self.held = time.monotonic()

    def advance(self, seconds: float) -> None:
        """Move the monotonic clock on by ``seconds``, and hold it there."""
        self.hold()
        assert self.held is not None
        self.held += seconds


@pytest.fixture
def partitions(request: pytest.FixtureRequest) -> int:
    """The partitions of the boards and families a test creates (``Api.create_board``,
    ``Api.board_fields``, tests/boards.py's ``write_board``): 1 unless the test runs with
    ``each_layout``."""
    value: int = getattr(request, "param", 1)
    return value


each_layout = pytest.mark.parametrize("partitions", [1, 4], indirect=True)
"""Runs a test of a board's semantics on both layouts of its Score items: one partition (the
default), and write-sharded over four (dynamo/scores.py). The test's boards are created with
the ``partitions`` fixture's value."""


@dataclass
class Api:
    """A GraphQL client for one test's app, with the app's DynamoDB call counter and clock,
    and the partitions of the boards the test creates."""

    http: TestClient[Any, Any]
    clock: Clock
    partitions: int = 1

    @property
    def board_fields(self) -> dict[str, int]:
        """What a test adds to the input of a board or family it creates: its partitions,
        when not the default."""
        return {"partitions": self.partitions} if self.partitions != 1 else {}

    @property
    def db(self) -> Db:
        db: Db = self.http.app[DB]
        return db

    @property
    def calls(self) -> dict[str, int]:
        counter: CallCounter = self.http.app[CALLS]
        return counter.snapshot()

    def reset_calls(self) -> None:
        self.http.app[CALLS].reset()

    async def raw(
        self,
        query: str,
        variables: dict[str, Any] | None = None,
        *,
        key: str | None = API_KEYS[0],
    ) -> dict[str, Any]:
        """POST a GraphQL request (with an API key unless ``key`` is None); returns the whole
        response body (data and errors)."""
        headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
        response = await self.http.post(
            "/graphql", json={"query": query, "variables": variables}, headers=headers
        )
        assert response.status == 200, await response.text()
        body: dict[str, Any] = await response.json()
        return body

    async def gql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """POST a GraphQL request that must succeed; returns ``data``."""
        body = await self.raw(query, variables)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    async def create_player(self, player_id: str, name: str | None = None) -> dict[str, Any]:
        data = await self.gql(
            """mutation($i: CreatePlayerInput!) { createPlayer(input: $i) {
                player { id name email } errors { code message field } } }""",
            {
                "i": {
                    "id": player_id,
                    "name": name or player_id,
                    "email": f"{player_id}@x.example",
                }
            },
        )
        payload: dict[str, Any] = data["createPlayer"]
        assert payload["errors"] == [], payload
        return payload

    async def create_board(self, board_id: str, **fields: Any) -> dict[str, Any]:
        data = await self.gql(
            """mutation($i: CreateLeaderboardInput!) { createLeaderboard(input: $i) {
                leaderboard { id sortOrder scoreWidth } errors { code message field } } }""",
            {
                "i": {
                    "id": board_id,
                    "name": board_id,
                    "period": "GLOBAL",
                    **self.board_fields,
                    **fields,
                }
            },
        )
        payload: dict[str, Any] = data["createLeaderboard"]
        assert payload["errors"] == [], payload
        return payload

    async def submit(
        self, player_id: str, board_id: str, score: int, game_id: str = "game-1"
    ) -> dict[str, Any]:
        data = await self.gql(
            """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
                improved session { id score } score { score attainedAt }
                errors { code message field } } }""",
            {
                "i": {
                    "playerId": player_id,
                    "leaderboardId": board_id,
                    "gameId": game_id,
                    "score": score,
                }
            },
        )
        payload: dict[str, Any] = data["submitScore"]
        return payload


@contextmanager
def plain_client(endpoint_url: str) -> Iterator[Any]:
    """A plain (blocking) DynamoDB client of DynamoDB Local at ``endpoint_url``."""
    client: Any = botocore.session.get_session().create_client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=LOCAL_CREDENTIALS[0],
        aws_secret_access_key=LOCAL_CREDENTIALS[1],
    )
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def tables(dynamodb_endpoint: str) -> Iterator[Any]:
    """One plain DynamoDB client for the session, to drop each test's table."""
    with plain_client(dynamodb_endpoint) as client:
        yield client


@pytest.fixture
def settings(dynamodb_endpoint: str, tables: Any) -> Iterator[Settings]:
    """A fresh table's settings; the table (if the test made one) is dropped afterwards, so
    that the session's DynamoDB Local does not grow, and slow down, test after test."""
    fresh = Settings(
        endpoint_url=dynamodb_endpoint,
        region="us-east-1",
        table=f"t-{uuid.uuid4().hex[:12]}",
        cursor_secret=b"test-cursor-secret-0123456789",
        api_keys=API_KEYS,
        admin_keys=ADMIN_KEYS,
        limits=PATIENT,
    )
    yield fresh
    try:
        tables.delete_table(TableName=fresh.table)
    except ClientError as error:
        # A test that made no table leaves nothing to drop.
        if error.response["Error"]["Code"] != "ResourceNotFoundException":
            raise


async def _create(db: Db) -> None:
    await create_table(db.client, db.table)


@pytest.fixture(scope="session")
def graphiql_assets() -> Path:
    return ensure_graphiql_assets(default_cache_dir())


@asynccontextmanager
async def _serve(
    settings: Settings,
    graphiql_assets: Path | None,
    *,
    project_ranks: bool = False,
    partitions: int = 1,
) -> AsyncIterator[Api]:
    clock = Clock()
    app = create_app(
        settings,
        graphiql_assets=graphiql_assets,
        prepare=_create,
        credentials=LOCAL_CREDENTIALS,
        clock=clock,
        monotonic=clock.monotonic,
        project_ranks=project_ranks,
    )
    async with TestClient(TestServer(app)) as http:
        yield Api(http, clock, partitions)


@pytest.fixture
async def api(settings: Settings, graphiql_assets: Path, partitions: int) -> AsyncIterator[Api]:
    async with _serve(settings, graphiql_assets, partitions=partitions) as served:
        yield served


WAIT = 30.0
"""Seconds a test waits for a message, an answer or a count it expects before it fails: only
a guard against a hang, generous for a loaded machine."""

PATIENT = Limits(request_deadline=60.0, queue_timeout=50.0, dynamodb_read_timeout=20.0)
"""The tests' limits: the service's defaults, but a minute for each request and its wait for a
place or in a player's queue, and 20 s for an answer from DynamoDB Local. The tests check
answers, not speed; a loaded machine (DynamoDB Local, the service and the test client share
its cores) must not turn a slow answer into a refusal. Tests of the deadlines set their own."""

RACING = replace(PATIENT, request_deadline=240.0, queue_timeout=230.0)
"""The limits of racing instances: a play waits in its player's queue behind every play of
that player the same instance holds (up to 17 of 50), so its time is theirs too. A machine
running a second suite beside this one has made such a queue outlast PATIENT's minute; the
races check totals, never speed, and the tests' own 300 s limit still ends a hang."""


DIRECT = "direct"
CONFLICTS = "conflicts"
CONFLICT_HOLD = 0.010
"""Seconds a transaction holds its items under the conflict rule: a transaction's own
latency on DynamoDB, which widens the window in which others meet it."""

both_rules = pytest.mark.parametrize("instances", [DIRECT, CONFLICTS], indirect=True)
"""Runs a test of racing writes twice: against DynamoDB Local alone, and through the fault
proxy applying DynamoDB's transaction-conflict rule, which DynamoDB Local lacks (a
transaction touching an item another one in flight holds is cancelled, as on AWS)."""


@pytest.fixture
async def instances(
    request: pytest.FixtureRequest, settings: Settings, proxy: FaultProxy, partitions: int
) -> AsyncIterator[list[Api]]:
    """Three service instances (each its own client, loaders and per-player queues) on one
    table: what several processes behind a load balancer look like to DynamoDB. Given
    ``CONFLICTS`` (``both_rules``), they reach it through the proxy, applying the conflict
    rule with every transaction holding its items ``CONFLICT_HOLD``."""
    settings = replace(settings, limits=RACING)
    if getattr(request, "param", DIRECT) == CONFLICTS:
        proxy.emulate_conflicts(hold=CONFLICT_HOLD)
        settings = replace(settings, endpoint_url=proxy.url)
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(_serve(settings, None, partitions=partitions))
            for _ in range(3)
        ]


@dataclass
class Table:
    """Direct access to a fresh table, for tests of the ``dynamo`` layer."""

    db: Db
    counter: CallCounter


@pytest.fixture
async def table(settings: Settings) -> AsyncIterator[Table]:
    async with open_table(settings, LOCAL_CREDENTIALS) as db:
        await create_table(db.client, db.table)
        yield Table(db=db, counter=CallCounter(db.client))


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with EmbeddedRedis() as server:
        yield server.url


@dataclass
class Indexed:
    """A service with a rank index, and direct handles on the index and its projector."""

    api: Api
    index: RankIndex
    projector: Projector
    stream: TableStream

    async def all_records(self) -> list[dict[str, Any]]:
        """Every record the stream holds, shard by shard, page by page."""
        records: list[dict[str, Any]] = []
        for shard in await self.stream.shards():
            after = None
            while True:
                read = await self.stream.read(shard["ShardId"], after)
                records += read.records
                if not read.records or read.finished:
                    break
                after = read.records[-1]["dynamodb"]["SequenceNumber"]
        return records


UNBOUNDED_LAG_MS = 1 << 62
"""A bound on the index's lag that no wait passes."""


@pytest.fixture
async def indexed(
    settings: Settings, graphiql_assets: Path, redis_url: str, partitions: int
) -> AsyncIterator[Indexed]:
    """A service with a rank index whose projector the test drives (``projector.drain()``):
    the index answers once a drain has caught up with the stream, however long ago by the
    wall clock (the service's bound on its projector's lag, 5 s, would turn a drained index
    stale while a loaded machine runs the test's next requests). Tests of that bound set it."""
    with_index = replace(settings, redis_url=redis_url)
    async with _serve(with_index, graphiql_assets, partitions=partitions) as served:
        index = served.http.app[RANK_INDEX]
        index.max_lag_ms = UNBOUNDED_LAG_MS
        async with open_stream(settings, LOCAL_CREDENTIALS, served.db) as stream:
            yield Indexed(served, index, Projector(stream, index), stream)


@pytest.fixture
async def proxy(dynamodb_endpoint: str) -> AsyncIterator[FaultProxy]:
    """A fault-injecting proxy in front of the session's DynamoDB Local."""
    faults = FaultProxy(dynamodb_endpoint, seed=20261121)
    await faults.start()
    try:
        yield faults
    finally:
        await faults.close()


@asynccontextmanager
async def serving_on_loopback(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on a free loopback TCP port (for clients outside this process, such
    as a browser or node); yields its base URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        port: int = runner.addresses[0][1]
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
