"""What moderation costs: a ban of a player on many boards and the erasure of a player with
thousands of sessions, timed and counted in DynamoDB calls and items.

``python -m bench.moderation`` runs it; the command line is :mod:`bench.moderation.cli`.
"""
