"""Fuzzing of HTTP itself: malformed, truncated and mistyped POST bodies under odd content
types, Accept headers and request ids, and GET (and other methods) with odd query strings. Every
answer keeps the invariants of ``tests/fuzz/answers.py`` and the service keeps answering."""

from __future__ import annotations

import json
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import API_KEYS
from tests.fuzz.answers import REQUEST_ID, check_reply, sent_text, settle
from tests.fuzz.inputs import fuzz, has_surrogate, json_values, texts
from tests.fuzz.operations import MUTATIONS, query_requests
from tests.fuzz.wire import http_request, raw_http
from tests.fuzz.world import World, world_fixture  # noqa: F401  (the world fixture)

content_types = st.one_of(
    st.sampled_from(
        [
            None,
            "application/json",
            "application/json; charset=utf-8",
            "APPLICATION/JSON",
            "application/json; charset=latin-1",
            "application/json; charset=bogus",
            "application/graphql-response+json",
            "application/graphql",
            "application/jsonx",
            "text/plain",
            "text/html",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "multipart/form-data",
            "",
            ";",
            "*/*",
        ]
    ),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40),
)
accepts = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "application/json",
            "application/graphql-response+json",
            "application/graphql-response+json, application/json;q=0.9",
            "application/json;q=0.5, application/graphql-response+json;q=0.6",
            "application/graphql-response+json;q=0",
            "*/*",
            "text/html",
            "text/html, */*;q=0.1",
            "",
            ",,,",
            ";;",
            "application/graphql-response+json;q=nan",
            "application/graphql-response+json;q=1e999, application/json;q=-1",
        ]
    ),
    st.lists(
        st.tuples(
            st.sampled_from(
                ["application/json", "application/graphql-response+json", "*/*", "text/*", "x/y"]
            ),
            st.floats(0, 1).map(lambda q: f"{q:.3f}"),
        ),
        max_size=4,
    ).map(lambda parts: ", ".join(f"{m};q={q}" for m, q in parts)),
)
request_ids = st.one_of(
    st.none(),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=80),
    st.sampled_from(["req-1", "a" * 64, "a" * 65, "../x", "x y"]),
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """Request bodies: truncated, mutated or mistyped GraphQL requests, random text and bytes."""
    document, variables = draw(
        st.one_of(
            query_requests(),
            st.sampled_from(MUTATIONS).flatmap(
                lambda m: st.tuples(st.just(m[1]), m[2].map(lambda i: {"i": i}))
            ),
        )
    )
    request = json.dumps({"query": document, "variables": variables}).encode()
    kind = draw(st.sampled_from(["truncated", "mutated", "mistyped", "batch", "text", "bytes"]))
    if kind == "truncated":
        return request[: draw(st.integers(0, len(request)))]
    if kind == "mutated":
        data = bytearray(request)
        for _ in range(draw(st.integers(1, 5))):
            at = draw(st.integers(0, len(data) - 1))
            data[at] = draw(st.sampled_from(b'{}[]":,\\0a -.eE'))
        return bytes(data)
    if kind == "mistyped":
        fields = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "query": st.one_of(st.just(document), json_values),
                    "variables": json_values,
                    "operationName": json_values,
                    "extensions": json_values,
                },
            )
        )
        fields.update(draw(st.dictionaries(texts, json_values, max_size=2)))
        return json.dumps(fields).encode()
    if kind == "batch":
        return json.dumps(
            draw(st.lists(st.one_of(st.just({"query": document}), json_values), max_size=3))
        ).encode()
    if kind == "text":
        return draw(texts).encode("utf-8", "surrogatepass")
    return draw(st.binary(max_size=200))


@fuzz(90)
@given(
    body=bodies(),
    content_type=content_types,
    accept=accepts,
    request_id=request_ids,
    authorization=st.sampled_from([None, f"Bearer {API_KEYS[0]}"]),
)
async def test_malformed_request_bodies(
    world: World,
    body: bytes,
    content_type: str | None,
    accept: str | None,
    request_id: str | None,
    authorization: str | None,
) -> None:
    headers = [
        (name.encode(), value.encode())
        for name, value in [
            ("Content-Type", content_type),
            ("Accept", accept),
            ("X-Request-Id", request_id),
            ("Authorization", authorization),
        ]
        if value is not None
    ]
    reply = await raw_http(world.api, http_request("POST", b"/graphql", headers, body))
    check_reply(reply, sent_text(body, [request_id or ""]))
    if request_id is not None and reply.request_id is not None:
        sane = 1 <= len(request_id) <= 64 and set(request_id) <= REQUEST_ID
        assert (reply.request_id == request_id) == sane, (request_id, reply.request_id)
    await settle(world.api)


query_keys = st.one_of(
    st.sampled_from(["query", "variables", "operationName", "extensions", "Query", "query[]", ""]),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=10),
)


def _encode(text: str, how: str) -> str:
    if how == "quoted":
        return quote(text, safe="")
    if how == "plus":
        return quote(text, safe="").replace("%20", "+")
    return "".join(c if 0x21 <= ord(c) <= 0x7E and c not in "&#" else quote(c) for c in text)


@st.composite
def query_strings(draw: st.DrawFn) -> bytes:
    """A query string: GraphQL or junk values under odd names, encoded in odd ways."""
    document, variables = draw(query_requests())
    values = st.one_of(
        st.just(document),
        st.just(json.dumps(variables)),
        st.sampled_from(
            [
                "{ __typename }",
                "mutation { __typename }",
                "mutation { createPlayer(input: "
                '{name: "n", email: "e@x.example"}) { errors { code } } }',
                "{",
                "null",
                "[]",
                "{}",
                "1",
                '"x"',
                "%",
                "%zz",
                "%00",
                "%ff%fe",
                "%C0%AF",
                "+",
                "=",
                "==",
                ";",
            ]
        ),
        texts.filter(lambda t: not has_surrogate(t)),
        json_values.map(json.dumps),
    )
    pairs = draw(
        st.lists(
            st.tuples(query_keys, values, st.sampled_from(["quoted", "plus", "raw"])), max_size=5
        )
    )
    joined = "&".join(
        f"{_encode(k, how)}={v if v.startswith('%') else _encode(v, how)}" for k, v, how in pairs
    )
    suffix = draw(st.sampled_from(["", "&", "&&", "#frag", "?", "&=", "&query"]))
    return (joined + suffix).encode("utf-8")[:6000]


@fuzz(70)
@given(
    query_string=query_strings(),
    method=st.sampled_from(["GET", "GET", "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"]),
    accept=accepts,
    authorization=st.sampled_from([None, f"Bearer {API_KEYS[0]}"]),
)
async def test_get_requests_with_odd_query_strings(
    world: World, query_string: bytes, method: str, accept: str | None, authorization: str | None
) -> None:
    headers = [
        (name.encode(), value.encode())
        for name, value in [("Accept", accept), ("Authorization", authorization)]
        if value is not None
    ]
    reply = await raw_http(world.api, http_request(method, b"/graphql?" + query_string, headers))
    ide = method == "GET" and accept is not None and ("text/html" in accept or "*/*" in accept)
    if method == "HEAD":
        assert reply.status < 500
    else:
        check_reply(reply, sent_text(query_string), ide=ide)
    await settle(world.api)
