"""The schema as the service serves it: the types of :mod:`gql.schema` with the extensions that
every operation goes through, on every transport, and what the edge checks documents against
outside a request."""

from __future__ import annotations

from collections.abc import Callable

from graphql import GraphQLSchema
from strawberry.extensions import SchemaExtension

from edge.cached_answers import CachedAnswers
from edge.cost import CostLimit
from edge.document_cache import VALIDATION_CACHE_SIZE, Documents
from edge.document_limits import DocumentLimits
from edge.limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS, limit_rule
from gql.errors import ErrorCodes
from gql.schema import build_schema

__all__ = [
    "DOCUMENTS",
    "EXTENSIONS",
    "GRAPHQL_SCHEMA",
    "LIMIT_RULE",
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "VALIDATION_CACHE_SIZE",
    "schema",
]

LIMIT_RULE = limit_rule(max_depth=MAX_DEPTH, max_aliases=MAX_ALIASES)
"""The depth and alias limits as a validation rule, for checking documents outside a request
(the service checks them in :mod:`edge.limits`, before the specification's rules)."""

DOCUMENTS = Documents()
"""The schema's parsed and validated documents, by query text."""

EXTENSIONS: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
    ErrorCodes,
    # Document limits, then validation, both cached by query text: clients send the same
    # few operations again and again. Introspection is exempt from the depth limit
    # (GraphiQL's schema query nests deeply).
    lambda: DocumentLimits(DOCUMENTS),
    # After validation: the worst-case cost of a valid document, and the caller's
    # allowance for it.
    CostLimit,
    # After the cost check and the reservation of its points: a query answered from the
    # response cache is bounded as one that runs.
    CachedAnswers,
]
"""The extensions every operation goes through, in order."""

schema = build_schema(EXTENSIONS)

GRAPHQL_SCHEMA: GraphQLSchema = schema._schema
"""The graphql-core schema that ``schema`` builds: what documents are parsed, validated and
costed against outside a request."""
