"""Rank latency through GraphQL from the Redis rank index and from the table's COUNT, and the
stream's lag to the index.

``python -m bench.rank_index`` runs it; the command line is :mod:`bench.rank_index.cli`.
"""
