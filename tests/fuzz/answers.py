"""The invariants of every answer: a status under 500, no leaked traceback or Python exception
name, a code on every GraphQL error and UserError, a short 4xx for anything that is not GraphQL;
and, after an example, a service that still answers over a table whose keys are well formed."""

from __future__ import annotations

import contextlib
import io
import json
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dynamo.errors import ErrorCode
from tests.conftest import API_KEYS, Api
from tests.fuzz.inputs import has_surrogate
from tests.key_grammar import key_violations
from tests.scan import scan_items

LEAKS = (
    "Traceback",
    'File "',
    "KeyError",
    "TypeError",
    "ValueError",
    "AttributeError",
    "IndexError",
    "ValidationError",
    "ClientError",
    "BotoCoreError",
    "OverflowError",
    "RecursionError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "AssertionError",
    "ZeroDivisionError",
    "OSError",
    "RuntimeError",
    "LookupError",
    "JSONDecodeError",
    "maximum recursion depth",
    "botocore",
    "site-packages",
)
USER_ERROR_CODES = frozenset(code.value for code in ErrorCode)
DOCUMENT_LIMITS = frozenset(
    {
        "CHARACTER_LIMIT_EXCEEDED",
        "TOKEN_LIMIT_EXCEEDED",
        "DEPTH_LIMIT_EXCEEDED",
        "ALIAS_LIMIT_EXCEEDED",
        "OPERATION_LIMIT_EXCEEDED",
        "FRAGMENT_LIMIT_EXCEEDED",
        "SPREAD_LIMIT_EXCEEDED",
        "SAME_NAME_LIMIT_EXCEEDED",
        "MERGE_LIMIT_EXCEEDED",
    }
)
"""The codes of a document refused by one of its limits."""
PRE_EXECUTION = frozenset({"BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"}) | DOCUMENT_LIMITS
GRAPHQL_CODES = USER_ERROR_CODES | PRE_EXECUTION
JSON_TYPES = frozenset({"application/json", "application/graphql-response+json"})
SHORT_BODY = 2048
MAX_BODY = 1 << 20
REQUEST_ID = frozenset(string.ascii_letters + string.digits + "._-")


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    text: str
    request_id: str | None


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value, dictionary keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


def sent_text(*parts: Any) -> str:
    """What a request carried, as text: an echo of it in an answer is not a leak."""
    found: list[str] = []
    for part in parts:
        if isinstance(part, bytes):
            decoded = part.decode("utf-8", "replace")
            found.append(decoded)
            with contextlib.suppress(ValueError, RecursionError):
                found.extend(strings_in(json.loads(decoded)))
        else:
            found.extend(strings_in(part))
    return "\n".join(found)


def _user_errors(data: Any) -> Iterator[dict[str, Any]]:
    """The UserError objects of every mutation payload inside ``data``."""
    if isinstance(data, dict):
        errors = data.get("errors")
        if isinstance(errors, list):
            yield from (e for e in errors if isinstance(e, dict) and "code" in e)
        for key, value in data.items():
            if key != "errors":
                yield from _user_errors(value)
    elif isinstance(data, list):
        for value in data:
            yield from _user_errors(value)


def check_graphql(body: Any, context: str) -> dict[str, Any]:
    """A GraphQL response: data and/or errors, every error coded, nothing internal."""
    assert isinstance(body, dict), context
    assert set(body) <= {"data", "errors", "extensions"}, context
    assert "data" in body or "errors" in body, context
    for error in body.get("errors") or []:
        assert isinstance(error.get("message"), str), context
        assert error["message"], context
        code = (error.get("extensions") or {}).get("code")
        assert code in GRAPHQL_CODES, f"{code!r} in {error!r}; {context}"
    for error in _user_errors(body.get("data")):
        assert error["code"] in USER_ERROR_CODES, f"{error!r}; {context}"
        assert isinstance(error.get("message"), str), context
        assert error["message"], context
    return body


def check_reply(reply: Reply, sent: str, *, ide: bool = False) -> dict[str, Any] | None:
    """The invariants of every answer; returns the GraphQL body when there is one."""
    context = f"sent {sent[:300]!r}; got {reply.status} {reply.content_type} {reply.text[:500]!r}"
    assert reply.status < 500, context
    for leak in LEAKS:
        assert leak not in reply.text or leak in sent, f"{leak!r} leaked; {context}"
    if reply.request_id is not None:
        assert 1 <= len(reply.request_id) <= 64, context
        assert set(reply.request_id) <= REQUEST_ID, context
    if reply.content_type in JSON_TYPES:
        body = json.loads(reply.text)
        decoded = "\n".join(strings_in(body))
        for leak in LEAKS:
            assert leak not in decoded or leak in sent, f"{leak!r} leaked; {context}"
        return check_graphql(body, context)
    if reply.content_type == "text/html":
        assert ide, f"an HTML page was not asked for; {context}"
        assert reply.status == 200, context
        return None
    assert 400 <= reply.status < 500, f"not GraphQL, so a 4xx; {context}"
    assert len(reply.text) <= SHORT_BODY, f"a long error body; {context}"
    return None


async def _reply(response: Any) -> Reply:
    return Reply(
        status=response.status,
        content_type=response.content_type,
        text=await response.text(errors="replace"),
        request_id=response.headers.get("X-Request-Id"),
    )


async def graphql(
    api: Api,
    query: Any,
    variables: Any = None,
    *,
    key: str | None = API_KEYS[0],
    headers: dict[str, str] | None = None,
) -> dict[str, Any] | None:
    """POST a GraphQL request (any JSON in its fields) and check the answer: the GraphQL body,
    or None when the request was refused before GraphQL (no query, or a body over 1 MiB)."""
    payload = {"query": query, "variables": variables}
    data = json.dumps(payload).encode()
    sent_headers = {"Content-Type": "application/json", **(headers or {})}
    if key is not None:
        sent_headers["Authorization"] = f"Bearer {key}"
    response = await api.http.post("/graphql", data=io.BytesIO(data), headers=sent_headers)
    reply = await _reply(response)
    body = check_reply(reply, sent_text(payload, list((headers or {}).values())))
    if len(data) > MAX_BODY:
        assert reply.status == 413, reply
        return None
    if not query:
        assert reply.status == 400, reply
        return None
    if any(has_surrogate(text) for text in strings_in(json.loads(data))):
        # A lone surrogate (what the server decodes: a JSON pair of surrogates is one
        # character) is no Unicode text: the request is not readable.
        assert reply.status == 400, reply
        return None
    assert reply.status == 200, reply
    assert body is not None
    return body


async def assert_alive(api: Api) -> None:
    response = await api.http.post("/graphql", json={"query": "{ __typename }"})
    assert response.status == 200
    body = await response.json()
    assert "errors" not in body, body
    assert body["data"] == {"__typename": "Query"}


async def assert_keys_well_formed(api: Api) -> list[dict[str, Any]]:
    items = await scan_items(api.db)
    assert key_violations(items) == []
    return items


async def settle(api: Api) -> None:
    """After an example: the service still answers and every key is well formed."""
    await assert_alive(api)
    await assert_keys_well_formed(api)


def by_key(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))
