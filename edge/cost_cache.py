"""The costs of the most recent operations, remembered, so that an operation sent again is
not walked again (edge/cost_walk.py)."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from graphql import DocumentNode, GraphQLSchema

from edge.cost_walk import document_cost
from edge.document_cache import VALIDATION_CACHE_SIZE

__all__ = ["remembered_cost"]

_COSTS: OrderedDict[bytes, int] = OrderedDict()
"""The cost of the most recent operations, by a digest of the query text, the operation's
name and the variables: clients send the same few operations with the same few variables."""


def _cost_key(query: str, operation_name: str | None, variables: Mapping[str, Any]) -> bytes | None:
    try:
        canonical = json.dumps(
            [operation_name, dict(variables), query],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError):
        return None
    return hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def remembered_cost(
    schema: GraphQLSchema,
    query: str,
    document: DocumentNode,
    operation_name: str | None = None,
    variables: Mapping[str, Any] | None = None,
) -> int:
    """:func:`document_cost`, remembered for the last :data:`VALIDATION_CACHE_SIZE` operations
    (the service has one schema, and ``document`` is the parse of ``query``)."""
    key = _cost_key(query, operation_name, variables or {})
    if key is None:
        return document_cost(schema, document, operation_name, variables)
    cost = _COSTS.get(key)
    if cost is None:
        cost = _COSTS[key] = document_cost(schema, document, operation_name, variables)
        while len(_COSTS) > VALIDATION_CACHE_SIZE:
            _COSTS.popitem(last=False)
    else:
        _COSTS.move_to_end(key)
    return cost
