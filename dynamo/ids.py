"""What an identifier inside a key may be, and session id generation."""

from __future__ import annotations

import re

from ulid import ULID

__all__ = ["ID_PATTERN", "new_session_id"]

ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""A player, leaderboard, family or game id: nothing that could break the key it sits in."""


def new_session_id() -> str:
    """A new ULID: sorts by creation time, so SESSION# keys read descending are newest first."""
    return str(ULID())
