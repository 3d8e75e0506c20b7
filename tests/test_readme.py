"""Every GraphQL example of the documentation runs, in order, against a service with demo data:
the README's, each hand-written page's on a service of its own, and the tutorial's pages one
after the other on one service, as a reader follows them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from leaderboard.seed import seed
from tests.conftest import ADMIN_KEYS, WAIT, Api
from tests.docs_pages import DOCS, ROOT, TUTORIAL, example_pages, graphql_blocks, operations


def _groups() -> list[Any]:
    """The pages whose examples run on one service: the tutorial's together, in its order;
    every other page (the README included) alone."""
    tutorial = [DOCS / path for path in TUTORIAL]
    alone = [[p] for p in example_pages() if p not in tutorial]
    return [
        pytest.param(group, id=" + ".join(p.relative_to(ROOT).as_posix() for p in group))
        for group in [tutorial, *alone]
        if any(graphql_blocks(p.read_text()) for p in group)
    ]


def _payload_errors(data: Any) -> list[Any]:
    """Every `errors` list of a mutation payload anywhere in the response."""
    found: list[Any] = []
    if isinstance(data, dict):
        for key, value in data.items():
            found += (
                value if key == "errors" and isinstance(value, list) else _payload_errors(value)
            )
    elif isinstance(data, list):
        for value in data:
            found += _payload_errors(value)
    return found


async def _first_push(api: Api, operation: str) -> dict[str, Any]:
    """A subscription's first message over WebSocket (graphql-transport-ws), as a page's
    reader sees it; the subscription is then completed."""
    async with api.http.ws_connect("/graphql", protocols=("graphql-transport-ws",)) as ws:
        await ws.send_json({"type": "connection_init", "payload": {}})
        assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": operation}})
        message: dict[str, Any] = await ws.receive_json(timeout=WAIT)
        assert message["type"] == "next", (operation, message)
        await ws.send_json({"id": "1", "type": "complete"})
        body: dict[str, Any] = message["payload"]
        return body


def test_the_tutorial_lists_its_pages_in_the_order_of_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text().split("# --- navigation", 1)[1]
    assert re.findall(r"tutorial/[\w-]+\.md", nav) == list(TUTORIAL)


@pytest.mark.parametrize("pages", _groups())
async def test_the_examples_run_in_order_without_errors(api: Api, pages: list[Path]) -> None:
    await seed(api.db, 5, progress=False)
    examples = [block for p in pages for block in graphql_blocks(p.read_text())]
    assert examples
    for example in examples:
        for operation in operations(example):
            # An admin key may run every example (moderation too).
            if operation.startswith("subscription"):
                body = await _first_push(api, operation)
            else:
                body = await api.raw(operation, key=ADMIN_KEYS[0])
            assert "errors" not in body, (operation, json.dumps(body["errors"]))
            assert _payload_errors(body["data"]) == [], (operation, body["data"])


def test_the_pages_show_the_charts_the_benchmarks_drew() -> None:
    """The pages can show only images inside docs/: the benchmarks' charts are copied there,
    and must be the ones bench/results holds."""
    copies = sorted((DOCS / "assets" / "bench").glob("*.png"))
    assert copies
    for copy in copies:
        assert copy.read_bytes() == (ROOT / "bench" / "results" / copy.name).read_bytes(), copy


def test_the_readme_has_a_first_query_and_a_first_play() -> None:
    blocks = graphql_blocks((ROOT / "README.md").read_text())
    assert any("topScores" in b for b in blocks)
    assert any("submitScore" in b for b in blocks)
