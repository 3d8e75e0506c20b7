"""The served application with a recorder on its DynamoDB client: one GraphQL request (or one
call of the table layer) at a time, and the units it cost."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from redis.asyncio import Redis

from bench.capacity.recorder import CapacityRecorder, RecordedCall
from bench.capacity.units import CallUnits, tally
from bench.core.measure import post_graphql
from bench.core.rank_sync import wait_in_sync
from bench.core.stack import CREDENTIALS, create_served_table, serve_app, served_settings
from dynamo.db import Db
from dynamo.keys import Entity
from dynamo.leaderboards import LEADERBOARD
from edge.app_keys import DB
from leaderboard.app import create_app
from leaderboard.config import Limits

__all__ = ["PATIENT", "Measured", "Probe", "board_partition", "measured", "probe"]

PATIENT = Limits(request_deadline=300.0, dynamodb_read_timeout=120.0)
"""The service's default limits, except a request's deadline and a DynamoDB call's read
timeout: a rank by COUNT on a board of 100,000 entries reads about 10 MB, which DynamoDB Local
on a shared machine may take longer than the defaults allow. The units do not depend on it."""


def board_partition(leaderboard_id: str) -> str:
    """The partition key every item of a board shares: its metadata and its Score items."""
    entity: Entity = LEADERBOARD
    return entity.pk.fill(leaderboard_id=leaderboard_id)


@dataclass(frozen=True)
class Measured:
    """What one operation cost, summed over ``requests`` requests: DynamoDB calls by name,
    read units, base-table write units, index write units, the write units on the board's
    partition (when the operation names a board) and what DynamoDB Local reported."""

    name: str
    requests: int
    calls: dict[str, int]
    read: float
    write: float
    index_write: float
    board_write: float | None
    reported: float

    @property
    def computed(self) -> float:
        """Every unit computed: reads, table writes and index writes."""
        return self.read + self.write + self.index_write

    def per_request(self) -> dict[str, Any]:
        """The units of one request on average, as the report lists them."""
        n = self.requests
        return {
            "name": self.name,
            "requests": n,
            "calls": {k: round(v / n, 3) for k, v in self.calls.items()},
            "read_units": round(self.read / n, 3),
            "write_units": round(self.write / n, 3),
            "index_write_units": round(self.index_write / n, 3),
            "board_partition_write_units": (
                None if self.board_write is None else round(self.board_write / n, 3)
            ),
            "reported_units": round(self.reported / n, 3),
            "computed_units": round(self.computed / n, 3),
        }


def measured(
    name: str, units: CallUnits, *, requests: int = 1, board_id: str | None = None
) -> Measured:
    """The record of ``units`` spent by ``requests`` requests of operation ``name``."""
    board = (
        None if board_id is None else units.write_by_partition.get(board_partition(board_id), 0.0)
    )
    return Measured(
        name,
        requests,
        dict(units.calls),
        units.read,
        units.write,
        units.index_write,
        board,
        units.reported,
    )


@dataclass(frozen=True)
class Probe:
    """A served application: its GraphQL URL, its table layer and the recorder on its client;
    when it keeps a rank index in step, a client of the index's Redis."""

    url: str
    db: Db
    recorder: CapacityRecorder
    http: aiohttp.ClientSession
    index_redis: Redis | None = None

    async def in_step(self) -> None:
        """When the service keeps a rank index: wait until its projector has made a whole
        pass over the table's stream begun after this call, so that the next operation finds
        everything written before it in the index (a board created just now among them).
        Otherwise whether the index answers an operation's ranks, or the table's COUNT
        Queries do, would depend on how far the projector has got, and so would its units."""
        if self.index_redis is not None:
            await wait_in_sync(self.index_redis, self.db.table)

    async def gql(self, query: str, variables: Mapping[str, Any]) -> Any:
        """One GraphQL request, with the benchmark's API key; its data."""
        return await post_graphql(self.http, self.url, query, variables)

    async def units_of(self, action: Callable[[], Awaitable[Any]]) -> tuple[Any, CallUnits]:
        """Run ``action``; its result and the units of the DynamoDB calls it made."""
        self.recorder.take()
        result = await action()
        calls: list[RecordedCall] = self.recorder.take()
        return result, tally(calls).total


@asynccontextmanager
async def probe(
    endpoint_url: str,
    table: str,
    inspector: Any,
    http: aiohttp.ClientSession,
    *,
    redis_url: str | None = None,
    project_ranks: bool = False,
) -> AsyncIterator[Probe]:
    """Serve the application on ``table`` (created if missing), its response cache off so
    that every request reaches DynamoDB, with :data:`PATIENT` limits; with ``redis_url``,
    ranks from the rank index there (and with ``project_ranks`` this instance keeps the index
    in step)."""
    settings = dataclasses.replace(
        served_settings(endpoint_url, table, redis_url=redis_url, limits=PATIENT),
        cache_max_seconds=0,
    )
    app = create_app(
        settings, credentials=CREDENTIALS, prepare=create_served_table, project_ranks=project_ranks
    )
    async with serve_app(app) as url:
        db = app[DB]
        recorder = CapacityRecorder(db.client, inspector, table)
        if not (redis_url and project_ranks):
            yield Probe(url, db, recorder, http)
            return
        index_redis = Redis.from_url(redis_url)
        try:
            yield Probe(url, db, recorder, http, index_redis)
        finally:
            await index_redis.aclose()
