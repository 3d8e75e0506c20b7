"""The GraphQL examples of the documentation (README.md and every page under docs/): each block
is a valid document of schema.graphql, and each runnable block runs, page by page and in order,
against a service holding the demo data, answering as its page shows (docsgen/examples.py has
the marking convention). The pages that continue the one before them (the tutorial's) run
after it on the same service, and a subscription runs over WebSocket up to its first push."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from graphql import build_schema

from docsgen.examples import (
    ANY,
    README,
    Example,
    ExampleError,
    continues,
    differences,
    documentation_pages,
    examples,
    graphql_blocks,
    is_subscription,
    payload_errors,
    read_blocks,
    runs,
    schema_errors,
)
from leaderboard.seed import seed
from tests.boards import write_items
from tests.conftest import ADMIN_KEYS, API_KEYS, WAIT, Api
from tests.scan import scan_items

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = build_schema((ROOT / "schema.graphql").read_text())
PAGES = documentation_pages(ROOT)
FIXTURE = Path(__file__).resolve().parent / "pages" / "examples.md"
DEMO_PLAYERS = 5
KEYS = {"admin": ADMIN_KEYS[0], "game-server": API_KEYS[0], "anonymous": None}

_DEMO: list[dict[str, Any]] = []
"""The demo data's items, read back from the first table this process seeded: every other page's
service gets a copy of them, a few batched writes where seeding again takes seconds of plays."""


async def demo_data(api: Api) -> None:
    """The demo data (leaderboard.seed) in the table of ``api``, a fresh one."""
    if _DEMO:
        await write_items(api.db, _DEMO)
        return
    await seed(api.db, DEMO_PLAYERS, progress=False)
    _DEMO.extend(await scan_items(api.db))


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


async def first_push(
    api: Api, operation: str, variables: dict[str, Any] | None, headers: dict[str, str]
) -> dict[str, Any]:
    """A subscription's first message over WebSocket (graphql-transport-ws), as a page's
    reader gets it: its payload, or the errors an ``error`` message carries; the subscription
    is then completed."""
    async with api.http.ws_connect(
        "/graphql", protocols=("graphql-transport-ws",), headers=headers
    ) as ws:
        await ws.send_json({"type": "connection_init", "payload": {}})
        assert (await ws.receive_json(timeout=WAIT))["type"] == "connection_ack"
        payload = {"query": operation, "variables": variables}
        await ws.send_json({"id": "1", "type": "subscribe", "payload": payload})
        message: dict[str, Any] = await ws.receive_json(timeout=WAIT)
        if message["type"] == "error":
            return {"errors": message["payload"]}
        assert message["type"] == "next", message
        await ws.send_json({"id": "1", "type": "complete"})
        body: dict[str, Any] = message["payload"]
        return body


async def run(api: Api, example: Example) -> list[str]:
    """What is wrong with the answers to an example's operations, each line naming the block
    (empty when they answer as the page shows, or, with no answer shown, without errors)."""
    key = KEYS[example.key]
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    problems: list[str] = []
    for operation in example.operations:
        if is_subscription(operation):
            body = await first_push(api, operation, example.variables, headers)
        else:
            response = await api.http.post(
                "/graphql",
                json={"query": operation, "variables": example.variables},
                headers=headers,
            )
            body = await response.json()
        if example.output_line is not None:
            problems += [
                f"{example.where}: {difference} (the answer shown at line {example.output_line})"
                for difference in differences(example.output, body)
            ]
        elif "errors" in body:
            problems.append(f"{example.where}: errors {body['errors']}")
        elif payload_errors(body.get("data")):
            problems.append(f"{example.where}: payload errors {payload_errors(body['data'])}")
    return problems


def _with_blocks() -> list[Any]:
    return [pytest.param(page, id=_name(page)) for page in PAGES if graphql_blocks(page)]


@pytest.mark.parametrize("page", _with_blocks())
def test_every_graphql_block_is_a_valid_document_of_the_schema(page: Path) -> None:
    problems = [
        f"{_name(page)}:{block.line}: {error.message}"
        for block in graphql_blocks(page)
        for error in schema_errors(SCHEMA, block.text)
    ]
    assert problems == [], "\n".join(problems)


def _runnable() -> list[Any]:
    """The runs of pages that have runnable examples, each named by its pages."""
    return [
        pytest.param(group, id=" + ".join(_name(page) for page in group))
        for group in runs(ROOT)
        if any(examples(page, _name(page)) for page in group)
    ]


def test_the_documentation_has_runnable_examples_and_the_tutorial_runs_whole() -> None:
    assert len(_runnable()) >= 5
    assert sum(len(examples(page, _name(page))) for page in PAGES) >= 30
    tutorial = sorted((ROOT / "docs" / "tutorial").glob("*.md"))
    assert tutorial
    for page in tutorial:
        assert len(examples(page, _name(page))) == len(graphql_blocks(page)), _name(page)


@pytest.mark.parametrize("pages", _runnable())
async def test_the_runnable_examples_of_each_page_answer_as_shown(
    api: Api, pages: list[Path]
) -> None:
    await demo_data(api)
    for page in pages:
        for example in examples(page, _name(page)):
            problems = await run(api, example)
            assert problems == [], "\n".join(problems)


async def test_a_page_is_run_in_order_and_a_wrong_answer_fails(api: Api) -> None:
    found = examples(FIXTURE, "pages/examples.md")
    assert [(e.block.line, e.key, e.variables, e.output_line) for e in found] == [
        (13, "admin", None, 22),
        (29, "anonymous", {"id": "docs-board"}, 39),
        (44, "game-server", None, 49),
        (56, "admin", None, 61),
        (68, "admin", None, None),
        (77, "anonymous", None, 82),
        (89, "anonymous", None, 94),
        (102, "anonymous", None, 107),
    ]
    problems = [
        [re.sub(r'"requestId": "\w+"', '"requestId": "…"', line) for line in await run(api, e)]
        for e in found
    ]
    assert problems == [
        [],
        [],
        [],
        [
            "pages/examples.md:56: $.data.leaderboard.entryCount: shown 3, the answer has 0 "
            "(the answer shown at line 61)"
        ],
        [
            "pages/examples.md:68: payload errors [{'code': 'LEADERBOARD_EXISTS'}]",
        ],
        [],
        [],
        [
            "pages/examples.md:102: $.errors: not shown, but the answer has "
            '[{"message": "no leaderboard \'no-board\'", "extensions": '
            '{"code": "LEADERBOARD_NOT_FOUND", "field": "leaderboardId", "requestId": "…"}}] '
            "(the answer shown at line 107)",
            'pages/examples.md:102: $.data: shown {"leaderboardChanged": '
            '{"leaderboardId": "no-board"}}, the answer has null (the answer shown at line 107)',
        ],
    ]


def test_an_invalid_block_is_reported_with_the_schemas_message() -> None:
    [error] = schema_errors(SCHEMA, '{ leaderboard(id: "x") { nme } }')
    assert error.message == "Cannot query field 'nme' on type 'Leaderboard'. Did you mean 'name'?"
    [error] = schema_errors(SCHEMA, "{ leaderboard(id: ")
    assert error.message.startswith("Syntax Error")
    assert schema_errors(SCHEMA, '{ a: player(id: "x") { id } }\nmutation { __typename }') == []


def test_a_shown_answer_matches_any_value_only_where_it_says_so() -> None:
    actual = {
        "data": {"s": {"id": "01JD", "at": "2026-11-27T10:00:00Z", "n": 3, "l": [1, 2]}},
        "extensions": {"cost": 3},
    }
    shown = {"data": {"s": {"id": ANY, "at": ANY, "n": 3, "l": [1, 2]}}}
    assert differences(shown, actual) == []
    assert differences({"data": {"s": ANY}}, actual) == []
    assert differences({"data": {"s": {"id": ANY, "at": ANY, "n": 4, "l": [1]}}}, actual) == [
        "$.data.s.n: shown 4, the answer has 3",
        "$.data.s.l: shown 1 items, the answer has 2",
    ]
    assert differences({"data": {"s": {"id": ANY}}}, actual) == [
        '$.data.s.at: not shown, but the answer has "2026-11-27T10:00:00Z"',
        "$.data.s.n: not shown, but the answer has 3",
        "$.data.s.l: not shown, but the answer has [1, 2]",
    ]
    assert differences({"data": {"n": True}}, {"data": {"n": 1}}) == [
        "$.data.n: shown true, the answer has 1"
    ]
    assert differences({"data": None}, {"data": None, "errors": [{"message": "x"}]}) == [
        '$.errors: not shown, but the answer has [{"message": "x"}]'
    ]


def test_markings_that_cannot_be_followed_are_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    cases = {
        "<!-- run -->\n```json\n{}\n```\n": "<!-- run --> marks a ```graphql block",
        "<!-- run as-root -->\n```graphql\n{ __typename }\n```\n": "unknown marking",
        "<!-- run -->\n```graphql\n{ __typename }\n{ __typename }\n```\n"
        '<!-- output -->\n```json\n{"data": {}}\n```\n': "holds one operation, not 2",
        "<!-- run -->\n```graphql\n{ __typename }\n```\n<!-- output -->\n```json\n{\n```\n": (
            "not JSON"
        ),
    }
    for text, message in cases.items():
        page.write_text(text)
        with pytest.raises(ExampleError, match=message):
            examples(page, "page.md")


def test_readme_blocks_run_unless_marked_and_docs_blocks_only_when_marked(tmp_path: Path) -> None:
    text = "```graphql\n{ __typename }\n```\n<!-- no-run -->\n```graphql\n{ __typename }\n```\n"
    page = tmp_path / README
    page.write_text(text)
    assert [e.block.line for e in examples(page, README)] == [1]
    assert examples(page, "docs/page.md") == []
    assert [b.mark for b in read_blocks(text)] == [None, "no-run"]


def _site(root: Path, nav: list[str], pages: dict[str, str]) -> None:
    """A repository of pages under ``root``: README.md, mkdocs.yml listing ``nav`` and the
    pages under docs/ by their paths there."""
    (root / README).write_text("# Read me\n")
    lines = ["site_name: x", "# --- navigation", "nav:", "  - Home: index.md", "  - Part:"]
    (root / "mkdocs.yml").write_text("\n".join([*lines, *(f"      - {n}" for n in nav)]) + "\n")
    for path, text in {"index.md": "# Home\n", **pages}.items():
        (root / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / path).write_text(text)


def test_pages_that_continue_run_after_the_page_before_them_in_the_navigation(
    tmp_path: Path,
) -> None:
    more = "<!-- continue -->\n# More\n"
    _site(
        tmp_path,
        ["a/one.md", "Two: a/two.md", "3. Three: a/three.md", "b.md"],
        {"a/one.md": "# One\n", "a/two.md": more, "a/three.md": more, "b.md": more, "c.md": "#\n"},
    )
    docs = tmp_path / "docs"
    assert runs(tmp_path) == [
        [tmp_path / README],
        [docs / "a" / "one.md", docs / "a" / "two.md", docs / "a" / "three.md", docs / "b.md"],
        [docs / "c.md"],
        [docs / "index.md"],
    ]
    assert continues(docs / "a" / "two.md")
    assert not continues(docs / "a" / "one.md")


def test_a_page_that_continues_must_follow_one_in_the_navigation(tmp_path: Path) -> None:
    _site(tmp_path, ["a.md"], {"a.md": "# A\n", "c.md": "<!-- continue -->\n# C\n"})
    with pytest.raises(ExampleError, match=re.escape("docs/c.md: <!-- continue --> continues")):
        runs(tmp_path)
    _site(tmp_path, ["a.md"], {"a.md": "# A\n", "index.md": "<!-- continue -->\n# Home\n"})
    (tmp_path / "docs" / "c.md").unlink()
    with pytest.raises(ExampleError, match=re.escape("docs/index.md: <!-- continue -->")):
        runs(tmp_path)
