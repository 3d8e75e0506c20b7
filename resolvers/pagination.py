"""Size rules shared by every list argument: page sizes and lists of ids."""

from __future__ import annotations

from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.ids import validate_id

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_IDS", "MAX_PAGE_SIZE", "check_id_list", "page_size"]

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


MAX_IDS = 100


def check_id_list(ids: list[str], field: str) -> list[str]:
    """A list of ids asked for at once: at most 100, each valid; duplicates dropped."""
    if len(ids) > MAX_IDS:
        raise LeaderboardError(
            ErrorCode.INVALID_ARGUMENT, f"{field} takes at most {MAX_IDS} ids", field
        )
    return list(dict.fromkeys(validate_id(i, field) for i in ids))
