"""Structured logs: one JSON line per request with id, operation, duration and calls."""

from __future__ import annotations

import json
import logging

import pytest

from leaderboard.observability import JsonFormatter
from tests.conftest import API_KEYS, Api


async def test_each_request_logs_one_json_line(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    await api.create_player("ann")
    caplog.set_level(logging.INFO, logger="leaderboard.access")
    caplog.clear()
    response = await api.http.post(
        "/graphql",
        json={"query": 'query Profile { player(id: "ann") { name } }'},
        headers={"Authorization": f"Bearer {API_KEYS[0]}"},
    )
    assert response.status == 200
    records = [r for r in caplog.records if r.name == "leaderboard.access"]
    assert len(records) == 1
    line = json.loads(JsonFormatter().format(records[0]))
    assert line["msg"] == "request"
    assert line["requestId"] == response.headers["X-Request-Id"]
    assert line["operationName"] == "Profile"
    assert line["status"] == 200
    assert line["dynamodbCalls"] == 1
    assert line["dynamodbCallsByOperation"] == {"GetItem": 1}
    assert line["durationMs"] > 0
    assert API_KEYS[0] not in json.dumps(line)


def test_the_formatter_writes_tracebacks_as_a_field() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, "f", 1, "failed", (), exc_info=__import__("sys").exc_info()
        )
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "error"
    assert "ValueError: boom" in line["traceback"]
