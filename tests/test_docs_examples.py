"""The GraphQL examples of the documentation (README.md and every page under docs/): each block
is a valid document of schema.graphql, and each runnable block runs, page by page and in order,
against a service holding the demo data, answering as its page shows (docsgen/examples.py has
the marking convention)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graphql import build_schema

from docsgen.examples import (
    ANY,
    README,
    Example,
    ExampleError,
    differences,
    documentation_pages,
    examples,
    graphql_blocks,
    payload_errors,
    read_blocks,
    schema_errors,
)
from leaderboard.seed import seed
from tests.boards import write_items
from tests.conftest import ADMIN_KEYS, API_KEYS, Api
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


async def run(api: Api, example: Example) -> list[str]:
    """What is wrong with the answers to an example's operations, each line naming the block
    (empty when they answer as the page shows, or, with no answer shown, without errors)."""
    key = KEYS[example.key]
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    problems: list[str] = []
    for operation in example.operations:
        response = await api.http.post(
            "/graphql",
            json={"query": operation, "variables": example.variables},
            headers=headers,
        )
        body: dict[str, Any] = await response.json()
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
    return [pytest.param(page, id=_name(page)) for page in PAGES if examples(page, _name(page))]


def test_the_documentation_has_runnable_examples() -> None:
    assert len(_runnable()) >= 1
    assert sum(len(examples(page, _name(page))) for page in PAGES) >= 5


@pytest.mark.parametrize("page", _runnable())
async def test_the_runnable_examples_of_each_page_answer_as_shown(api: Api, page: Path) -> None:
    await demo_data(api)
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
    ]
    problems = [await run(api, example) for example in found]
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
        '<!-- run -->\n```graphql\nsubscription { leaderboardChanged(id: "g") { id } }\n```\n': (
            "a subscription does not run over HTTP"
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
