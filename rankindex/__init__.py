"""The rank index: one Redis sorted set per board, fed by the table's stream.

DynamoDB stays the single source of truth; the index answers "how many entries are strictly
better" in O(log N) instead of a COUNT over the board, and is used only for boards it holds
completely while it is in sync.
"""
