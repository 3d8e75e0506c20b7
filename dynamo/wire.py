"""DynamoDB's answers read straight from their JSON.

An item comes over the wire as a map of attribute values, each a one-member object such as
``{"S": "text"}`` or ``{"N": "42"}``: already the form botocore returns. botocore's parser still
walks its model for every value, trying each of the ten members an attribute value may have, and
that walk is most of the CPU a large page costs (about 3 ms for 100 items). :class:`WireParser`
is botocore's parser for the JSON protocol, except that attribute values are taken as they come:
only binary values (``B``, ``BS``) are decoded from base64, as botocore decodes them, and nested
lists and maps are walked for those. An item whose attribute values are all of the types taken
as they come (most items) is returned as it was decoded, not rebuilt. Everything else (errors,
metadata, every other shape) is botocore's own. Both DynamoDB and DynamoDB Streams speak this
protocol with this shape.
"""

from __future__ import annotations

import base64
from typing import Any

from aiobotocore.parsers import AioJSONParser, AioResponseParserFactory
from botocore.model import Shape

__all__ = [
    "ATTRIBUTE_VALUE",
    "WireParser",
    "WireParserFactory",
    "attribute_map",
    "attribute_value",
]

ATTRIBUTE_VALUE = "AttributeValue"
"""The name of the attribute value's shape in both services' models."""

_AS_THEY_COME = frozenset({"S", "N", "SS", "NS", "BOOL", "NULL"})


def attribute_value(value: dict[str, Any]) -> dict[str, Any]:
    """One attribute value as botocore returns it: binary members decoded, the rest as sent."""
    if len(value) != 1:
        raise ValueError("an attribute value has exactly one member")
    ((tag, raw),) = value.items()
    if tag in _AS_THEY_COME:
        return value
    if tag == "M":
        return {"M": {name: attribute_value(member) for name, member in raw.items()}}
    if tag == "L":
        return {"L": [attribute_value(member) for member in raw]}
    if tag == "B":
        return {"B": base64.b64decode(raw)}
    if tag == "BS":
        return {"BS": [base64.b64decode(member) for member in raw]}
    raise ValueError(f"an attribute value of an unknown type: {tag}")


_taken_as_it_comes = _AS_THEY_COME.issuperset
"""Whether an attribute value's members (its one tag) are all of the types taken as they come."""


def attribute_map(value: dict[str, Any]) -> dict[str, Any]:
    """A map of attribute values (an item) as botocore returns it: ``value`` itself when every
    member is of a type taken as it comes, else a new map of each member's
    :func:`attribute_value`."""
    for member in value.values():
        if type(member) is not dict or len(member) != 1 or not _taken_as_it_comes(member):
            return {name: attribute_value(member) for name, member in value.items()}
    return value


_BOTOCORE: Any = AioJSONParser
"""botocore's own parser, whose walk the type stubs do not declare."""


class WireParser(AioJSONParser):
    """botocore's JSON-protocol parser, with attribute values (and maps of them) read as they
    come; a value of a type this module does not know goes to botocore's own walk."""

    def _handle_structure(self, shape: Shape, value: Any) -> Any:
        if shape.name == ATTRIBUTE_VALUE and isinstance(value, dict):
            try:
                return attribute_value(value)
            except ValueError:
                pass
        return _BOTOCORE._handle_structure(self, shape, value)

    def _handle_map(self, shape: Any, value: Any) -> Any:
        if shape.value.name == ATTRIBUTE_VALUE and isinstance(value, dict):
            try:
                return attribute_map(value)
            except ValueError:
                pass
        return _BOTOCORE._handle_map(self, shape, value)


class WireParserFactory(AioResponseParserFactory):
    """aiobotocore's parser factory, with :class:`WireParser` for the JSON protocol."""

    def create_parser(self, protocol_name: str) -> Any:
        if protocol_name == "json":
            defaults: dict[str, Any] = getattr(self, "_defaults", {})
            return WireParser(**defaults)
        return super().create_parser(protocol_name)
