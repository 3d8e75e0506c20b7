"""The GraphQL schema's reference page, from graphql-core's introspection of the schema the
service serves: every type, field, argument and enum value with its description, grouped, each
type with an anchor that every mention of it links to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from graphql import GraphQLSchema, introspection_from_schema

from docsgen.markdown import code, escape, heading, page, paragraphs

__all__ = ["render_schema"]

Introspected = dict[str, Any]

GROUPS: tuple[tuple[str, str, Callable[[Introspected], bool]], ...] = (
    ("Objects", "objects", lambda t: t["kind"] == "OBJECT"),
    ("Interfaces", "interfaces", lambda t: t["kind"] == "INTERFACE"),
    ("Unions", "unions", lambda t: t["kind"] == "UNION"),
    ("Inputs", "inputs", lambda t: t["kind"] == "INPUT_OBJECT"),
    ("Enums", "enums", lambda t: t["kind"] == "ENUM"),
    ("Scalars", "scalars", lambda t: t["kind"] == "SCALAR"),
)
"""The sections of named types, in order, after the roots' fields; a section without types
is left out."""

ROOTS = (
    ("Queries", "queryType", "query"),
    ("Mutations", "mutationType", "mutation"),
    ("Subscriptions", "subscriptionType", "subscription"),
)
"""Each root's section: its title, its key in the introspection, and its fields' anchors'
prefix (``query-player``)."""


def render_schema(schema: GraphQLSchema) -> str:
    """The reference page of ``schema``."""
    data = cast("Introspected", introspection_from_schema(schema))["__schema"]
    types: dict[str, Introspected] = {
        t["name"]: t for t in data["types"] if not t["name"].startswith("__")
    }
    roots = {key: (data[key] or {}).get("name") for _, key, _ in ROOTS if data.get(key) is not None}
    body: list[str] = []
    for title, key, prefix in ROOTS:
        root = roots.get(key)
        if root is None:
            continue
        body += [heading(2, title, _anchor(title)), ""]
        if types[root].get("description"):
            body += [*paragraphs(types[root]["description"]), ""]
        for field in types[root]["fields"]:
            body += _root_field(field, prefix)
    named = sorted(
        (t for name, t in types.items() if name not in roots.values()), key=lambda t: t["name"]
    )
    for title, anchor, belongs in GROUPS:
        members = [t for t in named if belongs(t)]
        if not members:
            continue
        body += [heading(2, title, anchor), ""]
        for named_type in members:
            body += _named_type(named_type)
    directives = [d for d in data["directives"] if d["name"] not in _SPECIFIED]
    if directives:
        body += [heading(2, "Directives", "directives"), ""]
        for directive in directives:
            body += _directive(directive)
    return page(
        "GraphQL schema",
        [
            "Every operation, type, field, argument and enum value of the schema the service "
            "serves at `/graphql`, with its description, as the schema itself states them "
            "(introspection gives the same text; `schema.graphql` holds the same schema as SDL). "
            "The service's own types come first: queries, mutations and subscriptions, then "
            "objects, inputs, enums and scalars, each in alphabetical order.",
        ],
        body,
    )


_SPECIFIED = frozenset(("include", "skip", "deprecated", "specifiedBy", "oneOf"))
"""Directives of the GraphQL specification, which its own text describes."""


def _anchor(name: str) -> str:
    return name.lower()


def _type_ref(ref: Introspected) -> str:
    """A type reference (``[Score!]!``) linking to its named type."""
    wrapped, named = _unwrap(ref)
    return f"[{code(wrapped)}](#{_anchor(named)})"


def _unwrap(ref: Introspected) -> tuple[str, str]:
    kind = ref["kind"]
    if kind == "NON_NULL":
        inner, named = _unwrap(ref["ofType"])
        return f"{inner}!", named
    if kind == "LIST":
        inner, named = _unwrap(ref["ofType"])
        return f"[{inner}]", named
    return ref["name"], ref["name"]


def _described(item: Introspected, indent: str) -> list[str]:
    """An item's description, its deprecation after it, each paragraph indented."""
    texts = paragraphs(item.get("description") or "") or ["(No description.)"]
    if item.get("isDeprecated"):
        reason = item.get("deprecationReason") or "No longer supported."
        texts.append(f"**Deprecated:** {escape(reason)}")
    lines: list[str] = []
    for number, text in enumerate(texts):
        if number:
            lines.append("")
        lines.append(indent + text)
    return lines


def _arguments(arguments: list[Introspected], indent: str) -> list[str]:
    """A definition list of arguments or input fields, each with its type, default and
    description."""
    lines: list[str] = []
    for argument in arguments:
        default = argument.get("defaultValue")
        shown = f" = {code(default)}" if default is not None else ""
        lines += [f"{indent}{code(argument['name'])}: {_type_ref(argument['type'])}{shown}"]
        described = _described(argument, "")
        lines += [f"{indent}:   {described[0]}"]
        lines += [f"{indent}    {line}" if line else "" for line in described[1:]]
        lines.append("")
    return lines


def _root_field(field: Introspected, prefix: str) -> list[str]:
    lines = [
        heading(3, code(field["name"]), f"{prefix}-{_anchor(field['name'])}"),
        "",
        f"**Type:** {_type_ref(field['type'])}",
        "",
        *_described(field, ""),
        "",
    ]
    if field["args"]:
        lines += ["**Arguments**", "", *_arguments(field["args"], "")]
    return lines


def _named_type(named: Introspected) -> list[str]:
    name = named["name"]
    lines = [heading(3, name, _anchor(name)), "", *_described(named, ""), ""]
    kind = named["kind"]
    if named.get("interfaces"):
        links = ", ".join(_type_ref(i) for i in named["interfaces"])
        lines += [f"**Implements:** {links}", ""]
    if named.get("possibleTypes"):
        links = ", ".join(_type_ref(t) for t in named["possibleTypes"])
        label = "Members" if kind == "UNION" else "Implemented by"
        lines += [f"**{label}:** {links}", ""]
    if kind in ("OBJECT", "INTERFACE"):
        lines += ["**Fields**", ""]
        for field in named["fields"]:
            lines += [f"{code(field['name'])}: {_type_ref(field['type'])}"]
            described = _described(field, "")
            lines += [f":   {described[0]}", *(f"    {x}" if x else "" for x in described[1:])]
            if field["args"]:
                lines += ["", "    Arguments:", ""]
                lines += [f"    {x}" if x else "" for x in _bulleted(field["args"])]
            lines.append("")
    elif kind == "INPUT_OBJECT":
        if named.get("isOneOf"):
            lines += ["Exactly one of its fields must be given (`@oneOf`).", ""]
        lines += ["**Fields**", "", *_arguments(named["inputFields"], "")]
    elif kind == "ENUM":
        lines += ["**Values**", ""]
        for value in named["enumValues"]:
            described = _described(value, "")
            lines += [code(value["name"]), f":   {described[0]}"]
            lines += [f"    {x}" if x else "" for x in described[1:]]
            lines.append("")
    elif kind == "SCALAR" and named.get("specifiedByURL"):
        lines += [f"Specified by <{named['specifiedByURL']}>.", ""]
    return lines


def _bulleted(arguments: list[Introspected]) -> list[str]:
    """A field's arguments as a list, nested in the field's definition."""
    lines: list[str] = []
    for argument in arguments:
        default = argument.get("defaultValue")
        shown = f" = {code(default)}" if default is not None else ""
        described = _described(argument, "")
        lines.append(
            f"- {code(argument['name'])}: {_type_ref(argument['type'])}{shown}: {described[0]}"
        )
        lines += [f"  {x}" if x else "" for x in described[1:]]
    return lines


def _directive(directive: Introspected) -> list[str]:
    name = directive["name"]
    locations = ", ".join(code(location) for location in directive["locations"])
    lines = [heading(3, code(f"@{name}"), f"directive-{_anchor(name)}"), ""]
    lines += [*_described(directive, ""), "", f"**Locations:** {locations}", ""]
    if directive["args"]:
        lines += ["**Arguments**", "", *_arguments(directive["args"], "")]
    return lines
