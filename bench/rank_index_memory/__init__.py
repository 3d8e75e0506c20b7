"""Memory and query latency of one board's rank index in Redis.

``python -m bench.rank_index_memory`` runs it; the command line is
:mod:`bench.rank_index_memory.cli`.
"""
