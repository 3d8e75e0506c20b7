"""Fuzzing of deep and wide documents: nesting, aliases, many fragments, fragment chains,
cycles and bombs, wide selections, nested lists, introspection and junk. Each is answered, or
refused with a typed error exactly when it passes the limit it tests (``tests/fuzz/limits.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.answers import assert_alive, graphql
from tests.fuzz.inputs import fuzz, texts
from tests.fuzz.limits import (
    MAX_ALIASES,
    MAX_CHARACTERS,
    MAX_DEPTH,
    MAX_FRAGMENTS,
    MAX_SAME_NAME,
    MAX_SPREADS,
    MAX_TOKENS,
    token_count,
)
from tests.fuzz.world import World, world_fixture  # noqa: F401  (the world fixture)

MAX_CHAIN = 40
"""Longest fragment chain generated: past 19 the fragment limit refuses it."""
MAX_NESTING = 200
"""The parser's own bound on nested brackets and braces (graphql-core's MAX_NESTING_DEPTH): a
syntax error, reached before the token limit by lists nested deeper."""
MAX_BOMB = 30
"""Most levels of a fragment spread twice at every level (2**30 expansions)."""
_CHAIN = ["sessions", "edges", "node", "player"]


def _nested(levels: int) -> str:
    """A selection ``levels`` fields deep: player, sessions, edges, node, player, ..."""
    inner = "__typename"
    for level in reversed(range(1, levels)):
        inner = f"{_CHAIN[(level - 1) % 4]} {{ {inner} }}"
    return f'{{ player(id: "fz-p1") {{ {inner} }} }}' if levels else "{ __typename }"


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, str, int]:
    """A document and the limit it tests: (document, limit name, size)."""
    shape = draw(
        st.sampled_from(
            [
                "depth",
                "aliases",
                "fragments",
                "fragment chain",
                "fragment cycle",
                "fragment bomb",
                "wide",
                "nested lists",
                "introspection",
                "junk",
            ]
        )
    )
    if shape == "depth":
        levels = draw(st.integers(1, 30))
        return _nested(levels), shape, levels
    if shape == "aliases":
        count = draw(st.integers(0, 150))
        field = draw(st.sampled_from(["__typename", 'leaderboard(id: "fz-best") { id }']))
        body = " ".join(f"a{i}: {field}" for i in range(count))
        return f"{{ __typename {body} }}", shape, count
    if shape == "fragments":
        count = draw(st.integers(0, 30))
        spreads = " ".join(f"...F{i}" for i in range(count))
        fragments = " ".join(f"fragment F{i} on Query {{ __typename }}" for i in range(count))
        return f"{{ __typename {spreads} }} {fragments}", shape, count
    if shape == "fragment chain":
        count = draw(st.integers(1, MAX_CHAIN))
        fragments = " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(count))
        return f"{{ ...F0 }} {fragments} fragment F{count} on Query {{ __typename }}", shape, count
    if shape == "fragment bomb":
        count = draw(st.integers(1, MAX_BOMB))
        fragments = " ".join(
            f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(count)
        )
        last = f"fragment F{count} on Query {{ a: __typename }}"
        return f"{{ ...F0 }} {fragments} {last}", shape, count
    if shape == "fragment cycle":
        count = draw(st.integers(1, 50))
        fragments = " ".join(
            f"fragment F{i} on Query {{ ...F{(i + 1) % count} }}" for i in range(count)
        )
        return f"{{ ...F0 }} {fragments}", shape, count
    if shape == "wide":
        count = draw(st.integers(1, 300))
        field = draw(st.sampled_from(["__typename", 'players(ids: ["fz-p1"]) { id }']))
        return "{ " + " ".join([field] * count) + " }", shape, count
    if shape == "nested lists":
        depth = draw(st.integers(1, 1500))
        return "{ players(ids: " + "[" * depth + "]" * depth + ") { id } }", shape, depth
    if shape == "introspection":
        depth = draw(st.integers(1, 25))
        inner = "name"
        for _ in range(depth):
            inner = f"ofType {{ {inner} }}"
        return f'{{ __type(name: "Query") {{ fields {{ type {{ {inner} }} }} }} }}', shape, depth
    junk = draw(
        st.one_of(
            texts,
            st.lists(
                st.sampled_from(
                    [
                        "{",
                        "}",
                        "(",
                        ")",
                        "[",
                        "]",
                        "...",
                        "@skip",
                        "@include(if: $x)",
                        "$x",
                        ":",
                        "query",
                        "mutation",
                        "subscription",
                        "fragment",
                        "on",
                        "Query",
                        "player",
                        "id",
                        '"s"',
                        "1",
                        "#",
                        "=",
                        "!",
                        ",",
                        "__schema",
                        "\u00e9",
                    ]
                ),
                max_size=60,
            ).map(" ".join),
        )
    )
    return junk, shape, 0


@fuzz(60)
@given(document=documents())
async def test_deep_and_wide_documents(world: World, document: tuple[str, str, int]) -> None:
    query, shape, size = document
    body = await graphql(world.api, query)
    if body is None:
        return
    errors = body.get("errors") or []
    # The last of the most errors reported says that validation stopped there.
    codes = {e["extensions"]["code"] for e in errors if not e["message"].startswith("Too many")}
    messages = " ".join(e["message"] for e in errors)
    tokens = token_count(query)
    if abs(tokens - MAX_TOKENS) <= 10:
        pass
    elif shape == "nested lists" and size > MAX_NESTING:
        assert "nested too deeply" in messages, body
        assert codes == {"GRAPHQL_VALIDATION_FAILED"}, body
    elif len(query) > MAX_CHARACTERS:
        assert codes == {"CHARACTER_LIMIT_EXCEEDED"}, body
        assert body.get("data") is None
    elif tokens > MAX_TOKENS:
        assert codes == {"TOKEN_LIMIT_EXCEEDED"}, body
        assert body.get("data") is None
    elif shape == "depth":
        assert codes == ({"DEPTH_LIMIT_EXCEEDED"} if size > MAX_DEPTH else set()), (size, body)
    elif shape == "aliases":
        assert codes == ({"ALIAS_LIMIT_EXCEEDED"} if size > MAX_ALIASES else set()), (size, body)
    elif shape == "fragments":
        # Each fragment adds a __typename to the root's.
        if size > MAX_FRAGMENTS:  # refused for that alone
            expected = {"FRAGMENT_LIMIT_EXCEEDED"}
        else:
            expected = {"SPREAD_LIMIT_EXCEEDED"} if size > MAX_SPREADS else set()
            expected |= {"SAME_NAME_LIMIT_EXCEEDED"} if size + 1 > MAX_SAME_NAME else set()
        assert codes == expected, (size, body)
    elif shape in ("fragment chain", "fragment bomb") and size + 1 > MAX_FRAGMENTS:
        # A bomb's 2**size aliases are counted (without expanding it) before its fragments.
        aliases = {"ALIAS_LIMIT_EXCEEDED"} if shape == "fragment bomb" else set()
        assert codes == {"FRAGMENT_LIMIT_EXCEEDED", *aliases}, body
        assert "fragment definitions found" in messages, body
    elif shape == "fragment chain":
        assert codes == set(), body
    elif shape == "wide":
        expected = {"SAME_NAME_LIMIT_EXCEEDED"} if size > MAX_SAME_NAME else set()
        assert codes == expected, (size, body)
    elif shape == "fragment bomb":
        # Every expansion counts: 2**size aliased fields of one name in the root.
        expected = {"ALIAS_LIMIT_EXCEEDED"} if 2**size > MAX_ALIASES else set()
        expected |= {"SAME_NAME_LIMIT_EXCEEDED"} if 2**size > MAX_SAME_NAME else set()
        assert codes == expected, (size, body)
    elif shape == "introspection":
        assert codes <= {"GRAPHQL_VALIDATION_FAILED"}, body
    elif shape == "fragment cycle":
        cycle = "FRAGMENT_LIMIT_EXCEEDED" if size > MAX_FRAGMENTS else "GRAPHQL_VALIDATION_FAILED"
        assert codes == {cycle}, body
    await assert_alive(world.api)
