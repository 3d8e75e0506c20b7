"""What a cached answer was read from, and which change notices can make it wrong.

An answer is cached only with the list of what it read (its dependencies). Four kinds are
known exactly: a board's rules (its own item, or its absence), its ``entryCount``, a first
page of its entries (from the best down to the page's last entry, or the whole board when
no entry follows the page), and a player's name. Anything else an answer reads marks it
uncacheable.

:func:`affected` is the one rule that decides, from a change notice alone, whether an answer
depending on something may have changed: when in doubt, it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dynamo.leaderboards import LeaderboardItem
from dynamo.scores import ScoreItem, rank_value
from rankindex.notices import Notice, NoticeKind

__all__ = [
    "BoardRules",
    "Dependencies",
    "Dependency",
    "EntryCount",
    "PlayerName",
    "TopPage",
    "affected",
    "first_page",
]


@dataclass(frozen=True)
class BoardRules:
    """A board's own item but for its counters: its rules (or its absence)."""

    board: str


@dataclass(frozen=True)
class EntryCount:
    """A board's ``entryCount``."""

    board: str


@dataclass(frozen=True)
class TopPage:
    """A board's entries from the best down to a rank value (a first page and its ranks)."""

    board: str
    down_to: int | None
    """The rank value of the page's last entry when more entries follow it; None when the
    page holds the whole board (any change of the board's entries changes the page)."""


@dataclass(frozen=True)
class PlayerName:
    """A player's display name."""

    player: str


Dependency = BoardRules | EntryCount | TopPage | PlayerName


def affected(dependency: Dependency, notice: Notice) -> bool:
    """Whether what ``dependency`` names may differ after the change ``notice`` reports."""
    if isinstance(dependency, PlayerName):
        return notice.kind is NoticeKind.PLAYER and notice.player == dependency.player
    if notice.board != dependency.board:
        return False
    if notice.kind is NoticeKind.BOARD:
        return True
    if isinstance(dependency, BoardRules):
        return False  # an entry's change leaves the board's rules as they were
    if isinstance(dependency, EntryCount):
        # The count moves when an entry comes or goes, or may have.
        return notice.before is None or notice.after is None
    return _reaches(dependency.down_to, notice)


def _reaches(down_to: int | None, notice: Notice) -> bool:
    """Whether an entry's change reaches a first page ending at rank value ``down_to``. An
    entry gone (``after`` None) may have been the only one below the page, whose
    ``hasNextPage`` then turns false; equal rank values may sit on either side of the page's
    end (ties are ordered by time, then player), so they reach it."""
    if down_to is None or notice.after is None or notice.after >= down_to:
        return True
    if notice.before is None:
        return not notice.fresh  # an earlier entry of unknown rank value may be in the page
    return notice.before >= down_to


@dataclass
class Dependencies:
    """What one execution has read, as its resolvers report it."""

    found: set[Dependency] = field(default_factory=set)
    cacheable: bool = True
    """False once the execution read something no dependency names."""

    def add(self, dependency: Dependency) -> None:
        self.found.add(dependency)

    def uncacheable(self) -> None:
        self.cacheable = False


def first_page(board: LeaderboardItem, entries: Sequence[ScoreItem], has_next: bool) -> TopPage:
    """The dependency of a board's first page holding ``entries``."""
    if not has_next or not entries:
        return TopPage(board.leaderboard_id, None)
    last = entries[-1]
    return TopPage(
        board.leaderboard_id, int(rank_value(last.score, board.score_width, board.sort_order))
    )
