"""Page-size rules shared by every connection."""

from __future__ import annotations

from dynamo.errors import ErrorCode, LeaderboardError

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "page_size"]

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


def page_size(first: int | None) -> int:
    """``first`` checked against the cap; 20 when not given."""
    if first is None:
        return DEFAULT_PAGE_SIZE
    if not 0 <= first <= MAX_PAGE_SIZE:
        raise LeaderboardError(
            ErrorCode.INVALID_ARGUMENT, f"first must be between 0 and {MAX_PAGE_SIZE}", "first"
        )
    return first
