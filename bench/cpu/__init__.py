"""The service's CPU time per request, request kind by request kind, next to the CPU of the
cheapest request, ``{ __typename }``: ``leaderboard serve --workers 1`` in its own process on a
loaded board, sent one request at a time, its CPU read from ``/proc`` before and after; with the
response cache off (no Redis), and a top-100 page from the Redis-backed response cache.

``python -m bench.cpu`` runs it; the command line is :mod:`bench.cpu.cli`.
"""
