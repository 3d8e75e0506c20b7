"""A flood of WebSockets and GraphQL subscriptions against a running service, from a process of its
own.

``python -m bench.socket_flood`` runs it; the command line is :mod:`bench.socket_flood.cli`.
"""
