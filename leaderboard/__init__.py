"""Leaderboard service: command line, embedded DynamoDB Local and the GraphiQL page."""

from __future__ import annotations

__all__: list[str] = []
