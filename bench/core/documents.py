"""The frontend's GraphQL operations, read from ``examples/operations/`` as they are shipped, and
the few small documents the benchmarks send beside them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = [
    "OPERATIONS_DIR",
    "PLAYER_RANK",
    "PLAYER_SESSIONS",
    "example_operation",
]

OPERATIONS_DIR = Path(__file__).resolve().parents[2] / "examples" / "operations"
"""Where the frontend's operations live (``AroundMe``, ``LeaderboardPage``, ``PlayerProfile``,
``SubmitScore``, ...), each in ``<name>.graphql``."""

PLAYER_RANK = """query PlayerRank($playerId: ID!, $leaderboardId: ID!) {
  player(id: $playerId) {
    id
    rank(leaderboardId: $leaderboardId) {
      rank
      total
      percentile
    }
  }
}
"""
"""A player's standing on one board, as a game's HUD asks for it."""

PLAYER_SESSIONS = """query PlayerSessions($playerId: ID!, $first: Int = 10) {
  player(id: $playerId) {
    id
    name
    sessions(first: $first) {
      edges {
        node {
          id
          gameId
          score
          durationSec
          playedAt
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
"""
"""A player's recent sessions, newest first (a history tab)."""


@cache
def example_operation(name: str) -> str:
    """The document of ``examples/operations/<name>.graphql``, exactly as shipped."""
    return (OPERATIONS_DIR / f"{name}.graphql").read_text()
