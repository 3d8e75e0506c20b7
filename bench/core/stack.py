"""The embedded stack: the real application served on a loopback TCP port, backed by a fresh
table in the DynamoDB Local the benchmark started; the settings every benchmark serves it
with (region, credentials, cursor secret, API and admin keys) and the patient DynamoDB client
of a benchmark's own loading."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiobotocore.config import AioConfig
from aiohttp import web

from dynamo.db import Db
from dynamo.metrics import CallCounter
from dynamo.table import create_table
from edge.app_keys import DB
from leaderboard.app import CALLS, create_app
from leaderboard.config import Limits, Settings
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = [
    "ADMIN_KEY",
    "API_KEY",
    "CREDENTIALS",
    "CURSOR_SECRET",
    "LOADER_CONFIG",
    "REGION",
    "ServedApp",
    "create_served_table",
    "dynamodb_local_version",
    "serve_app",
    "served_app",
    "served_settings",
]

CURSOR_SECRET = b"bench-cursor-secret-0123456789"
API_KEY = "bench-api-key"
"""The key the benchmark's client writes with."""
ADMIN_KEY = "bench-admin-key"
"""The key the benchmark's client moderates with (removals, bans, erasures)."""
CREDENTIALS = ("local", "local")
REGION = "us-east-1"
LOADER_CONFIG = AioConfig(
    retries={"mode": "standard", "max_attempts": 10},
    connect_timeout=5,
    read_timeout=120,
    max_pool_connections=64,
)
"""A benchmark's own DynamoDB client (loading, rebuild, verify): patient, so that a bulk write
that DynamoDB Local answers slowly is waited for rather than failed."""


@dataclass(frozen=True)
class ServedApp:
    """A running application: its GraphQL URL, its DynamoDB client and its call counter."""

    url: str
    db: Db
    counter: CallCounter


async def create_served_table(db: Db) -> None:
    """Create the served application's table (its ``prepare`` step at start-up)."""
    await create_table(db.client, db.table)


@asynccontextmanager
async def serve_app(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1 (any free port); its GraphQL URL. The server is cleaned up
    on leaving the block."""
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = int(runner.addresses[0][1])
        yield f"http://127.0.0.1:{port}/graphql"
    finally:
        await runner.cleanup()


def served_settings(
    endpoint_url: str, table: str, *, redis_url: str | None = None, limits: Limits | None = None
) -> Settings:
    """The settings of an application served on ``table`` in the DynamoDB at
    ``endpoint_url`` (with the rank index in the Redis at ``redis_url``, if given), with the
    service's default limits unless ``limits`` are given."""
    return Settings(
        endpoint_url=endpoint_url,
        region=REGION,
        table=table,
        cursor_secret=CURSOR_SECRET,
        api_keys=(API_KEY,),
        admin_keys=(ADMIN_KEY,),
        redis_url=redis_url,
        limits=limits or Limits(),
    )


@asynccontextmanager
async def served_app(
    endpoint_url: str,
    table: str,
    *,
    redis_url: str | None = None,
    project_ranks: bool = False,
    limits: Limits | None = None,
) -> AsyncIterator[ServedApp]:
    """Serve the application on 127.0.0.1 (any free port) with ``table``, created at start-up
    if missing, in the DynamoDB at ``endpoint_url``; the server is cleaned up on leaving the
    block. With ``redis_url`` ranks come from the rank index there, and with
    ``project_ranks`` this instance also runs the index's projector."""
    app = create_app(
        served_settings(endpoint_url, table, redis_url=redis_url, limits=limits),
        credentials=CREDENTIALS,
        prepare=create_served_table,
        project_ranks=project_ranks,
    )
    async with serve_app(app) as url:
        yield ServedApp(url, app[DB], app[CALLS])


def dynamodb_local_version(local: EmbeddedDynamoDB) -> str:
    """The version DynamoDB Local printed at start-up, from its log."""
    port = urlsplit(local.endpoint_url).port
    try:
        text = local.log_path.read_text(errors="replace")
    except OSError:
        return "unknown"
    marker = f"--- DynamoDB Local on port {port}:"
    start = text.rfind(marker)
    found = re.search(r"^Version:\s*(\S+)", text[start:], re.MULTILINE) if start >= 0 else None
    return found.group(1) if found else "unknown"
