"""End to end: the offline GraphiQL page in a real browser (Debian's Chromium, driven by
Playwright) against the real app on a loopback port, with every other host unreachable."""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from playwright.async_api import (
    Browser,
    ConsoleMessage,
    Error,
    Page,
    Route,
    ViewportSize,
    async_playwright,
)
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dynamo.db import Db
from dynamo.table import create_table
from leaderboard.app import create_app
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.config import Settings
from leaderboard.graphiql import DEFAULT_QUERY
from leaderboard.seed import seed
from tests.conftest import serving_on_loopback

__all__: list[str] = []

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A container's /dev/shm is often 64 MB: too small for Chromium's shared memory.
    "--disable-dev-shm-usage",
]
LOOPBACK = frozenset({"127.0.0.1", "localhost"})
VIEWPORT: ViewportSize = {"width": 1400, "height": 900}
TIMEOUT_MS = 10_000
DEMO_PLAYERS = 12
# Each run leaves its screenshot here (not committed); docs/graphiql.png, shown by the
# README and the tutorial's first page, is a copy of one.
SCREENSHOT = Path(__file__).resolve().parent.parent / "build" / "screenshots" / "graphiql.png"

# The result pane is a CodeMirror 5 editor; it renders only the lines in view, so the whole
# text is read from the editor instance that CodeMirror hangs on its wrapper element.
RESULT_TEXT = """() => {
  const editor = document.querySelector(".graphiql-response .CodeMirror");
  return editor && editor.CodeMirror ? editor.CodeMirror.getValue() : "";
}"""
RESULT_CONTAINS = f"""(needle) => ({RESULT_TEXT})().includes(needle)"""
QUERY_FIELDS = "{ __schema { queryType { fields { name } } } }"
DEMO_NAME = re.compile(r"^[A-Z][a-z]+ [A-Z][a-z]+ \d+$")


async def _prepare(db: Db) -> None:
    await create_table(db.client, db.table)
    await seed(db, DEMO_PLAYERS, progress=False)


@pytest.fixture
async def base_url(settings: Settings, graphiql_assets: Path) -> AsyncIterator[str]:
    """The real app with the demo data, served on a free loopback TCP port."""
    app = create_app(
        settings,
        graphiql_assets=graphiql_assets,
        prepare=_prepare,
        credentials=LOCAL_CREDENTIALS,
    )
    async with serving_on_loopback(app) as url:
        yield url


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"{CHROMIUM} is missing: this test drives Debian's Chromium. Install it with "
            "`make browser` (apt-get install chromium).",
            pytrace=False,
        )
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


async def _post(base_url: str, query: str) -> dict[str, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{base_url}/graphql", json={"query": query}) as response,
    ):
        assert response.status == 200, await response.text()
        body: dict[str, Any] = await response.json()
    assert "errors" not in body, body
    return body


async def _result_text(page: Page) -> str:
    text: str = await page.evaluate(RESULT_TEXT)
    return text


async def test_graphiql_runs_the_default_query_offline(browser: Browser, base_url: str) -> None:
    # The browser first: when it is missing, the test fails before the demo data is loaded.
    expected = await _post(base_url, DEFAULT_QUERY)
    top = expected["data"]["leaderboard"]["topScores"]["edges"][0]["node"]["player"]["name"]
    query_fields = await _post(base_url, QUERY_FIELDS)
    field_names = {f["name"] for f in query_fields["data"]["__schema"]["queryType"]["fields"]}

    context = await browser.new_context(viewport=VIEWPORT, service_workers="block")
    context.set_default_timeout(TIMEOUT_MS)
    served: list[str] = []
    blocked: list[str] = []

    async def only_loopback(route: Route) -> None:
        request = route.request
        if urlsplit(request.url).hostname in LOOPBACK:
            served.append(f"{request.method} {request.url}")
            await route.continue_()
        else:
            blocked.append(f"{request.method} {request.url}")
            await route.abort("internetdisconnected")

    await context.route("**/*", only_loopback)
    page = await context.new_page()
    page_errors: list[str] = []
    console_errors: list[str] = []

    def on_page_error(error: Error) -> None:
        page_errors.append(str(error))

    page.on("pageerror", on_page_error)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            console_errors.append(message.text)

    page.on("console", on_console)

    response = await page.goto(f"{base_url}/graphql")
    assert response is not None
    assert response.ok, response.status
    assert await page.title() == "Leaderboard GraphQL"

    # Run the operation the editor starts with.
    run = page.locator(".graphiql-execute-button")
    try:
        await run.wait_for()
        await run.click()
        await page.wait_for_function(RESULT_CONTAINS, arg=top)
    except PlaywrightTimeoutError as error:
        pytest.fail(
            f"GraphiQL showed no result: {error.message.splitlines()[0]}\n"
            f"blocked requests: {blocked}\npage errors: {page_errors}\n"
            f"console errors: {console_errors}",
            pytrace=False,
        )
    shown = await _result_text(page)
    assert '"topScores"' in shown
    assert top in await page.locator(".result-window").inner_text()

    # The pane shows exactly what the API answers for that operation.
    # (The allowance it reports has moved on between the two requests.)
    result = json.loads(shown)
    assert result["data"] == expected["data"]
    cost, expected_cost = result["extensions"]["cost"], expected["extensions"]["cost"]
    assert cost["requestedQueryCost"] == expected_cost["requestedQueryCost"] > 0
    assert (
        cost["throttleStatus"]["maximumAvailable"]
        == expected_cost["throttleStatus"]["maximumAvailable"]
    )
    board = result["data"]["leaderboard"]
    assert board["name"] == "All-time high scores"
    assert board["entryCount"] == DEMO_PLAYERS
    assert board["topScores"]["pageInfo"]["hasNextPage"] is True
    nodes = [edge["node"] for edge in board["topScores"]["edges"]]
    assert len(nodes) == 10
    assert nodes[0]["rank"] == 1
    assert [n["rank"] for n in nodes] == sorted(n["rank"] for n in nodes)
    assert [n["score"] for n in nodes] == sorted((n["score"] for n in nodes), reverse=True)
    assert all(DEMO_NAME.match(n["player"]["name"]) for n in nodes), nodes
    assert len({n["player"]["id"] for n in nodes}) == 10

    # The fold markers are drawn a moment after the text; wait for them before the picture.
    await page.locator(".graphiql-response .CodeMirror-foldgutter-open").first.wait_for()
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=SCREENSHOT)

    # The schema docs are browsable: Docs -> Query lists the query fields.
    await page.get_by_role("button", name="Show Documentation Explorer").click()
    explorer = page.locator(".graphiql-doc-explorer")
    await explorer.get_by_role("link", name="Query", exact=True).click()
    fields = explorer.locator(".graphiql-doc-explorer-field-name")
    await fields.filter(has_text=re.compile(r"^leaderboard$")).wait_for()
    assert set(await fields.all_inner_texts()) == field_names
    assert {"leaderboard", "player", "leaderboardFamily"} <= field_names

    await context.close()
    assert blocked == []
    assert served, "the page made no requests"
    assert all(r.split(" ", 1)[1].startswith(f"{base_url}/") for r in served), served
    assert f"POST {base_url}/graphql" in served
    assert page_errors == []
    assert console_errors == []


# Every Content-Security-Policy violation the page reports, collected before any of its own
# scripts run.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(
    `${event.effectiveDirective} blocked ${event.blockedURI || "inline"}`
    + ` (${event.sourceFile}:${event.lineNumber})`
  );
});
"""


async def test_graphiql_runs_under_its_content_security_policy(
    browser: Browser, base_url: str
) -> None:
    expected = await _post(base_url, DEFAULT_QUERY)
    top = expected["data"]["leaderboard"]["topScores"]["edges"][0]["node"]["player"]["name"]
    context = await browser.new_context(viewport=VIEWPORT, service_workers="block")
    context.set_default_timeout(TIMEOUT_MS)
    await context.add_init_script(RECORD_VIOLATIONS)
    page = await context.new_page()
    csp_messages: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            csp_messages.append(message.text)

    page.on("console", on_console)
    response = await page.goto(f"{base_url}/graphql")
    assert response is not None
    assert response.ok
    policy = await response.header_value("Content-Security-Policy")
    assert policy is not None
    assert "'unsafe-inline'" not in policy
    assert "'unsafe-eval'" not in policy
    assert re.search(r"script-src 'self' 'nonce-[A-Za-z0-9_-]{22}'", policy), policy

    await page.locator(".graphiql-execute-button").click()
    await page.wait_for_function(RESULT_CONTAINS, arg=top)
    await page.get_by_role("button", name="Show Documentation Explorer").click()
    await page.locator(".graphiql-doc-explorer").get_by_role("link", name="Query").click()

    violations = await page.evaluate("window.__cspViolations")
    await context.close()
    assert violations == []
    assert csp_messages == []


async def test_an_inline_script_without_the_nonce_is_blocked(
    browser: Browser, base_url: str
) -> None:
    # The policy has teeth: a script injected into the page without the nonce does not run.
    context = await browser.new_context(service_workers="block")
    await context.add_init_script(RECORD_VIOLATIONS)
    page = await context.new_page()
    await page.goto(f"{base_url}/graphql")
    await page.locator(".graphiql-execute-button").wait_for()
    ran = await page.evaluate(
        """() => {
          window.__injected = false;
          const script = document.createElement("script");
          script.textContent = "window.__injected = true";
          document.body.appendChild(script);
          return window.__injected;
        }"""
    )
    violations = await page.evaluate("window.__cspViolations")
    await context.close()
    assert ran is False
    assert [v.split(" ")[0] for v in violations] == ["script-src-elem"]
