"""Latency of every access pattern through HTTP/GraphQL next to the raw DynamoDB calls it needs.

``python -m bench.access_patterns`` runs it; the command line is :mod:`bench.access_patterns.cli`.
"""
