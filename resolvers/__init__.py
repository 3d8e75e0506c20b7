"""Resolve functions and per-request loaders between the GraphQL types and ``dynamo``."""
