"""Where a change goes: from a write through this process to its cache, its subscribers and
its sibling workers; and from the change feed or a sibling into this process.

A write through this process, once committed (:func:`writing`), evicts what it changed
from the process's response cache before the mutation answers, records its boards (their
kept reads are consistent for a few seconds: resolvers/local_writes.py), and tells the
process's sibling workers, if it has any (``Broker.peers``), with the notices the change feed
will carry. A change arriving from elsewhere (:class:`Arrivals`) evicts what it may change
and wakes its board's subscribers; a lost place (the feed's, or a sibling's) empties the
cache and wakes every subscriber.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from dynamo.errors import ErrorCode, LeaderboardError
from rankindex.notices import Notice, NoticeKind
from resolvers.broker import Broker
from resolvers.response_cache import ResponseCache

__all__ = ["Arrivals", "Written", "writing"]


@dataclass
class Written:
    """What a write through this process changed, once it has committed: entries whose
    change is known exactly (the notice the change feed will carry, which evicts only what
    it reaches), and boards and players of which anything may have changed."""

    changes: list[Notice] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)

    def notices(self) -> list[Notice]:
        """The change as notices: each entry's own, and one for each board and player."""
        return [
            *self.changes,
            *(Notice(NoticeKind.BOARD, board=board) for board in dict.fromkeys(self.boards)),
            *(Notice(NoticeKind.PLAYER, player=p) for p in dict.fromkeys(self.players)),
        ]


_UNCERTAIN = frozenset(
    {ErrorCode.OUTCOME_UNKNOWN, ErrorCode.BACKEND_UNAVAILABLE, ErrorCode.INTERNAL_SERVER_ERROR}
)
"""The errors of a write that may or may not have been made."""


@contextmanager
def writing(cache: ResponseCache | None, broker: Broker, *, atomic: bool) -> Iterator[Written]:
    """Around a write: once it has committed, evict what the caller says it changed (before
    the mutation answers, so that the caller's next read sees its write), record its boards
    in ``broker.writes`` (the reads of those boards that are kept are then consistent for a
    few seconds: they show the write), and tell the sibling workers. A write that fails
    with an error saying it was refused changed nothing when it is ``atomic`` (one
    transaction); any other failure (cut off, the backend unavailable or the outcome
    unknown, part of several steps done) may have changed anything: the whole cache is
    cleared, and the siblings clear theirs."""
    written = Written()
    try:
        yield written
    except LeaderboardError as error:
        if not (atomic and error.code not in _UNCERTAIN):
            _unknown(cache, broker)
        raise
    except BaseException:
        _unknown(cache, broker)
        raise
    for board in dict.fromkeys([*written.boards, *(c.board or "" for c in written.changes)]):
        broker.writes.wrote(board)
    notices = written.notices()
    if cache is not None:
        for notice in notices:
            cache.notice(notice)
    if broker.peers is not None and notices:
        broker.peers.tell(notices)


def _unknown(cache: ResponseCache | None, broker: Broker) -> None:
    if cache is not None:
        cache.clear()
    if broker.peers is not None:
        broker.peers.tell_resync()


class Arrivals:
    """Changes made through other processes, as they reach this one: from the change feed
    (every instance's, this process's own included) and from the sibling workers (theirs,
    at once)."""

    def __init__(self, broker: Broker, responses: ResponseCache | None) -> None:
        self.broker = broker
        self.responses = responses

    def from_feed(self, notice: Notice) -> None:
        """A notice of the change feed, but for the copy of a change this process made or
        heard of from a sibling, which did all this already."""
        if not self.broker.writes.handled(notice):
            self._apply(notice)

    def from_sibling(self, notice: Notice) -> None:
        """A sibling worker's write: as if made here, so that its board's kept reads are
        consistent for a few seconds and the change feed's copy of it wakes nobody again."""
        writes = self.broker.writes
        if notice.board is not None:
            if (
                notice.kind is NoticeKind.PUT
                and notice.player is not None
                and notice.version is not None
                and notice.after is not None
            ):
                writes.played(notice.board, notice.player, notice.version, notice.after)
            else:
                writes.wrote(notice.board)
        self._apply(notice)

    def resync(self) -> None:
        """Notices may have been lost: anything may have changed."""
        self.broker.writes.forget()
        if self.responses is not None:
            self.responses.clear()
        self.broker.publish_all()

    def _apply(self, notice: Notice) -> None:
        """Evict what the notice may change, and wake its board's subscribers (a player's
        notice wakes none: a push shows names as read, and is sent when the entries
        change)."""
        if self.responses is not None:
            self.responses.notice(notice)
        if notice.board:
            self.broker.publish(notice.board)
