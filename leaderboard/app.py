"""The aiohttp application: routes, and the DynamoDB client owned by the app's lifecycle."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from pathlib import Path

import aioboto3
from aiobotocore.config import AioConfig
from aiohttp import web
from botocore.exceptions import BotoCoreError, ClientError

from dynamo.cursors import CursorCodec
from dynamo.metrics import CallCounter
from dynamo.table import Db, now
from gql.auth import ApiKeys
from gql.view import API_KEYS, BROKER, CLOCK, DB, DEFAULT_QUERY, LeaderboardView
from leaderboard.config import Settings
from leaderboard.graphiql import add_graphiql_asset_route, render_graphiql_page
from leaderboard.observability import request_context
from resolvers.broker import Broker

__all__ = ["CALLS", "create_app"]

CALLS = web.AppKey("calls", CallCounter)

Prepare = Callable[[Db], Awaitable[None]]

_CLIENT_CONFIG = AioConfig(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=2,
    read_timeout=10,
    max_pool_connections=64,
)


def create_app(
    settings: Settings,
    *,
    graphiql_assets: Path | None = None,
    prepare: Prepare | None = None,
    credentials: tuple[str, str] | None = None,
    clock: Callable[[], datetime] = now,
) -> web.Application:
    """Build the application. ``prepare`` runs once the client exists, before serving (the
    embedded mode creates the table and loads demo data there); ``credentials`` overrides the
    AWS credential chain (DynamoDB Local accepts any); ``clock`` is the service's "now"."""
    app = web.Application(client_max_size=settings.max_body_bytes, middlewares=[request_context])
    app[CLOCK] = clock
    app[API_KEYS] = ApiKeys(settings.api_keys)
    app[BROKER] = Broker()

    async def dynamodb(app: web.Application) -> AsyncIterator[None]:
        session = aioboto3.Session()
        async with session.client(
            "dynamodb",
            endpoint_url=settings.endpoint_url,
            region_name=settings.region,
            config=_CLIENT_CONFIG,
            aws_access_key_id=credentials[0] if credentials else None,
            aws_secret_access_key=credentials[1] if credentials else None,
        ) as client:
            db = Db(
                client=client, table=settings.table, cursors=CursorCodec(settings.cursor_secret)
            )
            app[DB] = db
            app[CALLS] = CallCounter(client)
            if prepare is not None:
                await prepare(db)
            yield

    app.cleanup_ctx.append(dynamodb)
    page = None
    if graphiql_assets is not None:
        add_graphiql_asset_route(app, graphiql_assets)
        page = render_graphiql_page(endpoint="/graphql", default_query=DEFAULT_QUERY)
    view = LeaderboardView(graphiql_page=page)
    app.router.add_route("GET", "/graphql", view)
    app.router.add_route("POST", "/graphql", view)
    app.router.add_get("/healthz", healthz)
    return app


async def healthz(request: web.Request) -> web.Response:
    """200 once the table answers, 503 otherwise."""
    db = request.app[DB]
    try:
        described = await db.client.describe_table(TableName=db.table)
    except (BotoCoreError, ClientError) as error:
        return web.json_response(
            {"status": "unavailable", "table": db.table, "error": type(error).__name__}, status=503
        )
    return web.json_response(
        {"status": "ok", "table": db.table, "tableStatus": described["Table"].get("TableStatus")}
    )
