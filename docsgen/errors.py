"""The error codes' reference page: every value of the schema's ``ErrorCode`` enum with its
description (gql/enums.py), and the limits that answer with it."""

from __future__ import annotations

from graphql import GraphQLEnumType, GraphQLSchema

from docsgen.limits import ANSWERS, DOCUMENT, INPUT
from docsgen.markdown import code, heading, page, paragraphs
from docsgen.settings import limit_variable

__all__ = ["render_errors"]


def render_errors(schema: GraphQLSchema) -> str:
    enum = schema.type_map["ErrorCode"]
    assert isinstance(enum, GraphQLEnumType)
    limits: dict[str, list[str]] = {}
    for limit in (*DOCUMENT, *INPUT):
        if limit.code is not None:
            anchor = limit.name.strip("_").lower().replace("_", "-")
            limits.setdefault(limit.code.value, []).append(
                f"[{code(limit.name)}](limits.md#{anchor})"
            )
    for name, (error, _) in ANSWERS.items():
        if error is not None:
            variable = limit_variable(name)
            limits.setdefault(error.value, []).append(
                f"[{code(variable)}](settings.md#{variable.lower()})"
            )
    body: list[str] = []
    for name, value in enum.values.items():
        body += [heading(2, code(name), name.lower()), ""]
        body += [*paragraphs(value.description or "(No description.)"), ""]
        if name in limits:
            body += [f"Answers a request past {', '.join(limits[name])}.", ""]
    return page(
        "Error codes",
        [
            *paragraphs(enum.description or ""),
            "A mutation that writes nothing says why in its payload's `errors` "
            "(`UserError.code`, with a `message` and the input `field` at fault); any other "
            "failure is a GraphQL error whose `extensions.code` is one of these. The schema's "
            f"[{code('ErrorCode')}](schema.md#errorcode) enum holds the same values, in the "
            "same order.",
        ],
        body,
    )
