"""What closing a season costs: a board of 10,000 and one of 100,000 entrants frozen and its
final standings written (dynamo/closing.py), timed step by step, its request units counted, and
what its final standings take to store and to read beside the live board's items.

``python -m bench.season_close`` runs it; the command line is :mod:`bench.season_close.cli`.
"""
