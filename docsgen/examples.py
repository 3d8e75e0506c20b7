"""The GraphQL examples of the documentation: every ```graphql block of README.md and of the
pages under docs/, which of them run against a service, with what, and the answers they show.

A page marks a block with an HTML comment on the line before its fence (blank lines may come
between), which neither GitHub nor the site shows (docs/reference/conventions.md says the same
for writers):

- ``<!-- run -->`` before a ```graphql block: the block runs, with an admin key, against a
  service holding the demo data, after the page's runnable blocks above it; each of its
  operations is sent on its own, in order, a query or mutation over HTTP and a subscription
  over WebSocket (graphql-transport-ws), up to its first push. ``<!-- run game-server -->``
  sends a game-server key instead, ``<!-- run anonymous -->`` no key. Every ```graphql block
  of README.md runs as if marked ``<!-- run -->``, unless marked ``<!-- no-run -->``.
- ``<!-- variables -->`` before a ```json block right after a runnable block: the variables
  its operations are sent with.
- ``<!-- output -->`` before a ```json block right after a runnable block (or after its
  variables): the answer the block's operation must get (a subscription's: its first push),
  compared as JSON. The string ``"…"`` stands for any one value (an id, a time, a cursor).
  Only the top-level keys the shown answer has are compared, except that an answer shown
  without ``errors`` must have none. A block with an output holds one operation.

A runnable block without an output must be answered without errors, neither GraphQL errors nor
a mutation payload's ``errors``.

Each page runs on a service of its own, except that a page whose first line is
``<!-- continue -->`` runs after the page before it in the navigation (mkdocs.yml's ``nav:``),
on the same service: the pages so chained are one run (:func:`runs`), as the tutorial's
pages, which a reader follows one after the other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    parse,
    validate,
)

__all__ = [
    "ANY",
    "CONTINUE",
    "KEYS",
    "README",
    "Block",
    "Example",
    "ExampleError",
    "continues",
    "differences",
    "documentation_pages",
    "examples",
    "graphql_blocks",
    "is_subscription",
    "navigation",
    "operations",
    "payload_errors",
    "read_blocks",
    "runs",
    "schema_errors",
    "section",
]

ANY = "…"
"""In a shown answer, a string that matches any one value."""
KEYS = ("admin", "game-server", "anonymous")
"""What a runnable block may be sent with: an admin key (the default), a game-server key, or
no key."""
README = "README.md"
CONTINUE = "<!-- continue -->"
"""A page's first line when its examples run after the previous page's, on the same service."""

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_NAV_PAGE = re.compile(r"^[ \t]*- (?:[^\n]*: )?([\w./-]+\.md)[ \t]*$", flags=re.M)
_MARK = re.compile(r"^[ \t]*<!--[ \t]*(?P<mark>.*?)[ \t]*-->[ \t]*$")


class ExampleError(ValueError):
    """A page's markings that cannot be followed: where, and why."""


@dataclass(frozen=True)
class Block:
    """A fenced code block of a page."""

    language: str
    text: str
    line: int
    """The line of its opening fence, from 1."""
    mark: str | None
    """The HTML comment right before it (blank lines between allowed), without its ``<!--``
    and ``-->``."""


@dataclass(frozen=True)
class Example:
    """A runnable block, with what it is sent with and the answer its page shows."""

    page: str
    block: Block
    key: str
    variables: dict[str, Any] | None = None
    output: Any = None
    output_line: int | None = None
    operations: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.block.line}"


def is_subscription(operation: str) -> bool:
    """Whether a document's operations include a subscription (sent over WebSocket)."""
    return any(
        isinstance(d, OperationDefinitionNode) and d.operation is OperationType.SUBSCRIPTION
        for d in parse(operation).definitions
    )


def documentation_pages(root: Path) -> list[Path]:
    """README.md, then every Markdown page under docs/, in path order."""
    return [root / README, *sorted((root / "docs").rglob("*.md"))]


def navigation(root: Path) -> list[str]:
    """The pages mkdocs.yml's ``nav:`` lists, in its order, by their paths under docs/."""
    text = (root / "mkdocs.yml").read_text()
    nav = text[text.index("\nnav:\n") :]
    return _NAV_PAGE.findall(nav)


def continues(page: Path) -> bool:
    """Whether a page's examples run after the previous page's (its first line is
    ``<!-- continue -->``)."""
    return page.read_text().split("\n", 1)[0].strip() == CONTINUE


def runs(root: Path) -> list[list[Path]]:
    """The documentation's pages grouped as their examples run, each group on one service in
    its order: a page alone, or a page followed by the pages that continue it, in the order of
    the navigation. Groups are in the order of :func:`documentation_pages`."""
    nav = navigation(root)
    docs = root / "docs"
    following: dict[Path, Path] = {}
    for page in documentation_pages(root):
        if not continues(page):
            continue
        where = page.relative_to(docs).as_posix() if docs in page.parents else None
        if where not in nav or nav.index(where) == 0:
            raise ExampleError(
                f"{page.relative_to(root).as_posix()}: {CONTINUE} continues the page before it "
                "in mkdocs.yml's nav:, which lists it first or not at all"
            )
        following[docs / nav[nav.index(where) - 1]] = page
    groups: list[list[Path]] = []
    for page in documentation_pages(root):
        if continues(page):
            continue
        group = [page]
        while group[-1] in following:
            group.append(following[group[-1]])
        groups.append(group)
    return groups


def section(text: str, heading: str) -> str:
    """The text of a page under a heading line (``## The table``), up to the next heading of
    the same or a higher level; raises ValueError if the page has no such heading."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    found = re.compile(rf"^#{{1,{level}}} ", flags=re.M).search(text, start)
    return text[start : found.start() if found else len(text)]


def read_blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order (blocks nested in lists or
    admonitions included)."""
    lines = text.split("\n")
    blocks: list[Block] = []
    mark: str | None = None
    number = 0
    while number < len(lines):
        line = lines[number]
        opening = _FENCE.match(line)
        if opening is None:
            marked = _MARK.match(line)
            if marked is not None:
                mark = marked.group("mark")
            elif line.strip():
                mark = None
            number += 1
            continue
        indent, fence = opening.group("indent"), opening.group("fence")
        language = (opening.group("info").split() or [""])[0].strip("{}.")
        body: list[str] = []
        number += 1
        while number < len(lines):
            closing = lines[number]
            if closing.strip().startswith(fence) and set(closing.strip()) == {fence[0]}:
                break
            body.append(closing[len(indent) :] if closing.startswith(indent) else closing)
            number += 1
        blocks.append(Block(language, "\n".join(body) + "\n", number - len(body), mark))
        mark = None
        number += 1
    return blocks


def graphql_blocks(page: Path) -> list[Block]:
    return [b for b in read_blocks(page.read_text()) if b.language == "graphql"]


def examples(page: Path, name: str) -> list[Example]:
    """The runnable blocks of a page, in order, with their variables and shown answers;
    ``name`` is how failures name the page (its path from the repository's root)."""
    blocks = read_blocks(page.read_text())
    found: list[Example] = []
    every_block_runs = name == README
    index = 0
    while index < len(blocks):
        block = blocks[index]
        index += 1
        key = _run_key(block, every_block_runs, name)
        if key is None:
            continue
        variables: dict[str, Any] | None = None
        output: Any = None
        output_line: int | None = None
        if index < len(blocks) and blocks[index].mark == "variables":
            variables = _json(blocks[index], name)
            if not isinstance(variables, dict):
                raise ExampleError(f"{name}:{blocks[index].line}: variables must be an object")
            index += 1
        if index < len(blocks) and blocks[index].mark == "output":
            output = _json(blocks[index], name)
            output_line = blocks[index].line
            index += 1
        texts = operations(block.text)
        if output_line is not None and len(texts) != 1:
            raise ExampleError(
                f"{name}:{block.line}: a block whose answer is shown holds one operation, "
                f"not {len(texts)}"
            )
        found.append(Example(name, block, key, variables, output, output_line, texts))
    return found


def _run_key(block: Block, every_block_runs: bool, name: str) -> str | None:
    """The key a block runs with, or None if it does not run."""
    mark = block.mark or ""
    words = mark.split()
    if mark == "no-run":
        return None
    if words[:1] != ["run"]:
        if mark in ("variables", "output") and block.language != "json":
            raise ExampleError(f"{name}:{block.line}: <!-- {mark} --> marks a ```json block")
        return "admin" if every_block_runs and block.language == "graphql" else None
    if block.language != "graphql":
        raise ExampleError(f"{name}:{block.line}: <!-- run --> marks a ```graphql block")
    if len(words) > 2 or (len(words) == 2 and words[1] not in KEYS):
        raise ExampleError(
            f"{name}:{block.line}: unknown marking <!-- {mark} -->: "
            f"run, then nothing or one of {', '.join(KEYS)}"
        )
    return words[1] if len(words) == 2 else "admin"


def _json(block: Block, name: str) -> Any:
    try:
        return json.loads(block.text)
    except json.JSONDecodeError as error:
        raise ExampleError(f"{name}:{block.line}: not JSON: {error}") from error


def operations(text: str) -> list[str]:
    """Each operation of a block as a document of its own, in order: its text and the text of
    every fragment the block defines (a block may hold several anonymous operations, which
    one document may not)."""
    document = parse(text)
    fragments = [
        text[d.loc.start : d.loc.end]
        for d in document.definitions
        if isinstance(d, FragmentDefinitionNode) and d.loc is not None
    ]
    return [
        "\n".join([text[d.loc.start : d.loc.end], *fragments])
        for d in document.definitions
        if isinstance(d, OperationDefinitionNode) and d.loc is not None
    ]


def schema_errors(schema: GraphQLSchema, text: str) -> list[GraphQLError]:
    """What parsing, then validating, each operation of a block against ``schema`` finds
    wrong (empty when every operation is valid)."""
    try:
        documents: list[DocumentNode] = [parse(o) for o in operations(text)]
    except GraphQLError as error:
        return [error]
    if not documents:
        return [GraphQLError("the block holds no operation")]
    return [error for document in documents for error in validate(schema, document)]


def payload_errors(data: Any) -> list[Any]:
    """Every entry of an ``errors`` list of a mutation payload anywhere in ``data``."""
    found: list[Any] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "errors" and isinstance(value, list):
                found += value
            else:
                found += payload_errors(value)
    elif isinstance(data, list):
        for value in data:
            found += payload_errors(value)
    return found


def differences(shown: Any, actual: Any) -> list[str]:
    """Where an answer differs from the one shown, as JSON paths with both values; empty when
    it matches. Only the shown answer's top-level keys are compared, and ``errors`` must be
    absent when it is not shown."""
    found: list[str] = []
    if not isinstance(shown, dict) or not isinstance(actual, dict):
        return list(_differ(shown, actual, "$"))
    if "errors" not in shown and "errors" in actual:
        found.append(f"$.errors: not shown, but the answer has {json.dumps(actual['errors'])}")
    for key, value in shown.items():
        if key not in actual:
            found.append(f"$.{key}: shown, but the answer has none")
        else:
            found += _differ(value, actual[key], f"$.{key}")
    return found


def _differ(shown: Any, actual: Any, path: str) -> Iterator[str]:
    if shown == ANY:
        return
    if isinstance(shown, dict) and isinstance(actual, dict):
        for key in [*shown, *(k for k in actual if k not in shown)]:
            if key not in actual:
                yield f"{path}.{key}: shown, but the answer has none"
            elif key not in shown:
                yield f"{path}.{key}: not shown, but the answer has {json.dumps(actual[key])}"
            else:
                yield from _differ(shown[key], actual[key], f"{path}.{key}")
    elif isinstance(shown, list) and isinstance(actual, list):
        if len(shown) != len(actual):
            yield f"{path}: shown {len(shown)} items, the answer has {len(actual)}"
        for number, (one, other) in enumerate(zip(shown, actual, strict=False)):
            yield from _differ(one, other, f"{path}[{number}]")
    elif shown != actual or type(shown) is not type(actual):
        yield f"{path}: shown {json.dumps(shown)}, the answer has {json.dumps(actual)}"
