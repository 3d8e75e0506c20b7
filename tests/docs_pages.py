"""The project's documentation as the tests read it: README.md and the pages under docs/
(tests only).

The reference pages under docs/reference/ are generated from the code and hold the schema
itself, not examples to run; every other page is written by hand, and its GraphQL examples are
the ones tests parse, validate and run.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "DOCS",
    "README",
    "ROOT",
    "TUTORIAL",
    "example_pages",
    "graphql_blocks",
    "operations",
    "page",
    "section",
]

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
TUTORIAL = (
    "tutorial/index.md",
    "tutorial/first-steps.md",
    "tutorial/season.md",
    "tutorial/moderation.md",
    "tutorial/deployment-plan.md",
)
"""The tutorial's pages in the order a reader follows them (and mkdocs.yml lists them)."""


def page(path: str) -> str:
    """The text of a page of docs/ by its path there, such as ``explanation/capacity.md``."""
    return (DOCS / path).read_text()


def section(text: str, heading: str) -> str:
    """The text under a Markdown heading line (``## The table``), up to the next heading of
    the same or a higher level; raises if the heading is not there."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    ends = re.compile(rf"^#{{1,{level}}} ", flags=re.M)
    found = ends.search(text, start)
    return text[start : found.start() if found else len(text)]


def example_pages() -> list[Path]:
    """README.md, then every hand-written page of docs/, by path."""
    pages = sorted(p for p in DOCS.rglob("*.md") if REFERENCE not in p.parents)
    return [README, *pages]


def graphql_blocks(text: str) -> list[str]:
    """The ```graphql blocks of a page, in order."""
    return re.findall(r"```graphql\n(.*?)```", text, flags=re.S)


def operations(block: str) -> list[str]:
    """The operations of a block, which may hold several (each sent on its own)."""
    return re.split(r"\n(?=mutation|query|subscription|\{)", block.strip())
