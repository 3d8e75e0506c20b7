"""Typed aiohttp keys: what the application holds for the GraphQL view (the table, the clock,
the API keys, the broker, the rank index, the response cache; set as the app starts, see
leaderboard/app.py) and what a request carries beside it (its id, set by the app's
middleware; its operation's name, left by the view for the request's log line)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from aiohttp import web

from dynamo.db import Db
from edge.auth import ApiKeys
from rankindex.index import RankIndex
from resolvers.broker import Broker
from resolvers.response_cache import ResponseCache

__all__ = [
    "API_KEYS",
    "BROKER",
    "CLOCK",
    "DB",
    "OPERATION",
    "RANK_INDEX",
    "REQUEST_ID",
    "RESPONSES",
]

DB = web.AppKey("db", Db)
CLOCK: web.AppKey[Callable[[], datetime]] = web.AppKey("clock")
API_KEYS = web.AppKey("api_keys", ApiKeys)
BROKER = web.AppKey("broker", Broker)
RANK_INDEX = web.AppKey("rank_index", RankIndex)
"""Present only when a rank index is configured."""
RESPONSES = web.AppKey("responses", ResponseCache)
"""The process's response cache; present only when it keeps one."""
REQUEST_ID = web.RequestKey("request_id", str)
"""The request's id (set by the app's middleware)."""
OPERATION = web.RequestKey("operation_name", str)
"""The GraphQL operation's name, left by the view for the request's log line."""
