"""One hot board under DynamoDB's transaction-conflict rule: concurrent game-server clients of
distinct players playing on one board of one partition and of eight, beside the same load
spread over sixteen boards, through ``leaderboard serve`` and the fault proxy.

``python -m bench.hot_board`` runs it; the command line is :mod:`bench.hot_board.cli`.
"""
