"""The reference pages of docs/reference/ are what the code gives (``python -m docsgen``), and
they cover what the code has: every type and field of the schema, every environment variable
the service reads, each limit of a document with the code the service answers it with."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from graphql import build_schema, is_enum_type, is_input_object_type, is_object_type

from docsgen import REFERENCE, render_reference
from docsgen.limits import DOCUMENT
from docsgen.markdown import GENERATED, code, escape
from dynamo.errors import ErrorCode
from leaderboard.config import VARIABLES
from tests.test_abuse_validation import LIMITS

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("dynamo", "resolvers", "rankindex", "gql", "edge", "leaderboard")


@functools.cache
def _pages() -> dict[Path, str]:
    """The pages the code gives, rendered once (when a test asks, not as the tests are
    collected: each process of the suite collects them)."""
    return render_reference()


def test_every_reference_page_is_what_the_code_gives() -> None:
    stale = [
        str(path)
        for path, text in _pages().items()
        if not (ROOT / path).is_file() or (ROOT / path).read_text() != text
    ]
    assert stale == [], (
        f"out of date: {', '.join(stale)}: run `make docs-reference` (.venv/bin/python -m "
        "docsgen) and commit the pages"
    )


def test_no_generated_page_is_left_that_the_code_no_longer_gives() -> None:
    generated = {
        path.relative_to(ROOT)
        for path in (ROOT / REFERENCE).glob("*.md")
        if path.read_text().startswith(GENERATED)
    }
    assert generated == set(_pages())


def test_the_schema_page_has_every_type_and_field_of_schema_graphql() -> None:
    schema = build_schema((ROOT / "schema.graphql").read_text())
    text = _pages()[REFERENCE / "schema.md"]
    roots = {schema.query_type, schema.mutation_type, schema.subscription_type}
    missing = []
    for name, named in schema.type_map.items():
        if name.startswith("__"):
            continue
        if named in roots:
            assert is_object_type(named)
            prefix = "query" if named is schema.query_type else named.name.lower()
            missing += [
                f"{name}.{field}"
                for field in named.fields
                if f"{{ #{prefix}-{field.lower()} }}" not in text
            ]
            continue
        if f"### {name} {{ #{name.lower()} }}" not in text:
            missing.append(name)
        members: list[str] = []
        if is_object_type(named) or is_input_object_type(named):
            members = list(named.fields)
        elif is_enum_type(named):
            members = list(named.values)
        missing += [f"{name}.{member}" for member in members if f"`{member}`" not in text]
    assert missing == []


def test_every_environment_variable_the_service_reads_is_declared() -> None:
    """Every variable name the service's code spells out is one of VARIABLES (the limits'
    variables are spelled from their field names, see leaderboard.config.Limits)."""
    codes = {c.value for c in ErrorCode}
    spelled = set()
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            spelled |= set(
                re.findall(r"\"((?:LEADERBOARD|AWS|PROMETHEUS)_[A-Z0-9_]+)\"", path.read_text())
            )
    declared = {v.name for v in VARIABLES}
    assert spelled - codes - declared == set()
    assert "LEADERBOARD_TABLE" in spelled  # the search finds what the code spells


def test_each_document_limit_is_documented_with_the_code_the_service_answers() -> None:
    """tests/test_abuse_validation.py sends a document one past each limit and sees its code:
    the reference gives each of those limits with that value and that code."""
    answered = {(p.values[1], p.values[2]) for p in LIMITS}
    documented = {(limit.value(), limit.code.value) for limit in DOCUMENT if limit.code}
    assert answered <= documented
    assert len(answered) >= 9


def test_text_from_the_code_prints_as_written() -> None:
    assert escape("Bearer <key>, 10^15 - 1, a*b_c [x] a|b") == (
        r"Bearer &lt;key&gt;, 10^15 - 1, a\*b\_c \[x\] a\|b"
    )
    assert escape("its boards are `<id>.daily`,\n  and ``x_y``") == (
        "its boards are `<id>.daily`, and ``x_y``"
    )
    assert code("a`b") == "``a`b``"
