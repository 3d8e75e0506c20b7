"""Metadata: a JSON object a play carries, kept with its Session and, while the play is the
entry, with the entry (its Score item and its entry guard).

A document is at most ``MAX_METADATA_BYTES`` of compact UTF-8 JSON and nested at most
``MAX_METADATA_DEPTH`` deep (resolvers/inputs.py checks a client's). It is stored as a
string attribute, ``metadata``, holding that compact JSON text, not as a DynamoDB map: a
map's numbers come back as Decimal, so ``1.5``, ``2.0`` and integers past 2^53 would read back
as other JSON than was sent, while the text reads back as exactly the document written (and
its size is the size checked). An item without metadata has no such attribute.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer

__all__ = [
    "MAX_METADATA_BYTES",
    "MAX_METADATA_DEPTH",
    "Metadata",
    "decode_metadata",
    "encode_metadata",
]

MAX_METADATA_BYTES = 1024
"""The largest document, in bytes of its compact UTF-8 JSON."""
MAX_METADATA_DEPTH = 8
"""The deepest nesting of objects and arrays; the document itself is at depth 1."""


def encode_metadata(document: dict[str, Any]) -> str:
    """The compact JSON text of ``document``, as stored (non-ASCII characters kept as they
    are, so that its UTF-8 length is its size). Raises ValueError for a non-finite number."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def decode_metadata(value: Any) -> Any:
    """A stored document (its JSON text) as the object it holds; anything else unchanged."""
    return json.loads(value) if isinstance(value, str) else value


Metadata = Annotated[
    dict[str, Any],
    BeforeValidator(decode_metadata),
    PlainSerializer(encode_metadata, when_used="json"),
]
"""An item attribute holding a document: a dict in the model, its JSON text when stored."""
