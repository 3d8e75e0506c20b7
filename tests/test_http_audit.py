"""GraphQL over HTTP conformance: graphql-http's audit suite against the real app on a real
loopback port. Every MUST audit passes; SHOULD and MAY audits are reported, not required.

The audit runs in node (tests/http_audit.mjs, with the graphql-http pinned in
package-lock.json; `make test` installs it with `npm ci`) as a child process of this
test's event loop, which serves the app at the same time.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dynamo.db import Db
from dynamo.table import create_table
from leaderboard.app import create_app
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.config import Settings
from tests.conftest import serving_on_loopback

ROOT = Path(__file__).resolve().parent.parent
AUDIT_SCRIPT = ROOT / "tests" / "http_audit.mjs"
GRAPHQL_HTTP = ROOT / "node_modules" / "graphql-http" / "package.json"
AUDIT_TIMEOUT_SECONDS = 120


async def _create(db: Db) -> None:
    await create_table(db.client, db.table)


@pytest.fixture
async def graphql_url(settings: Settings, graphiql_assets: Path) -> AsyncIterator[str]:
    """The app as `leaderboard serve` builds it, served on a free loopback TCP port."""
    app = create_app(
        settings,
        graphiql_assets=graphiql_assets,
        prepare=_create,
        credentials=LOCAL_CREDENTIALS,
    )
    async with serving_on_loopback(app) as url:
        yield f"{url}/graphql"


async def _run_audit(url: str) -> list[dict[str, Any]]:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    assert GRAPHQL_HTTP.exists(), (
        "graphql-http is not installed: run `make node_modules/.installed`"
    )
    process = await asyncio.create_subprocess_exec(
        node,
        str(AUDIT_SCRIPT),
        url,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), AUDIT_TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    # 0: every MUST passed, 1: some MUST failed (listed below); anything else is a crash.
    assert process.returncode in (0, 1), stderr.decode(errors="replace")
    results: list[dict[str, Any]] = json.loads(stdout)
    return results


def _describe(result: dict[str, Any]) -> str:
    response = result.get("response") or {}
    return (
        f"[{result['id']}] {result['name']}: {result.get('reason')} "
        f"(got HTTP {response.get('status')}, content-type {response.get('contentType')!r}, "
        f"body {response.get('body')!r})"
    )


async def test_every_must_audit_passes(graphql_url: str) -> None:
    results = await _run_audit(graphql_url)
    must = [r for r in results if r["name"].startswith("MUST")]
    assert len(must) >= 10, f"the audit suite ran too few MUST audits: {results}"
    failing = [r for r in must if r["status"] != "ok"]
    assert not failing, f"{len(failing)} of {len(must)} MUST audits fail:\n" + "\n".join(
        _describe(r) for r in failing
    )


async def test_every_should_audit_passes_too(graphql_url: str) -> None:
    """Beyond the MUSTs: application/graphql-response+json with 4xx for refused requests."""
    results = await _run_audit(graphql_url)
    should = [r for r in results if r["name"].startswith("SHOULD")]
    assert len(should) >= 10, f"the audit suite ran too few SHOULD audits: {results}"
    failing = [r for r in should if r["status"] != "ok"]
    assert not failing, f"{len(failing)} of {len(should)} SHOULD audits fail:\n" + "\n".join(
        _describe(r) for r in failing
    )
