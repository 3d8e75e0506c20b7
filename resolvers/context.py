"""The per-request context handed to every resolver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum
from typing import Protocol

from dynamo.db import Db
from dynamo.items import now
from rankindex.index import RankIndex
from resolvers.broker import Broker
from resolvers.dependencies import Dependencies, Dependency
from resolvers.loaders import Loaders
from resolvers.rank_source import RankSource
from resolvers.response_cache import ResponseCache

__all__ = ["Allowance", "Capacity", "Context"]


class Allowance(Protocol):
    """What the caller of a request may still spend, in cost points (edge/cost_model.py)."""

    def spend(self, cost: int) -> float | None:
        """Take ``cost`` points: None when granted, else the seconds until they would be."""

    def status(self) -> dict[str, float]:
        """The caller's allowance, as reported to it."""


class Capacity(Protocol):
    """The process's room for executing operations, in cost points (edge/admission.py)."""

    async def reserve(self, points: int) -> int:
        """Wait for ``points`` of room and take them (returns what was taken); raise
        SERVICE_OVERLOADED when there is none in time."""

    async def release(self, points: int) -> None:
        """Give back what ``reserve`` took."""


class Role(IntEnum):
    """What a caller's key allows, each role all that the one before it does."""

    ANONYMOUS = 0
    """No key: public reads."""
    GAME_SERVER = 1
    """A game-server key: players, boards, plays and private reads."""
    ADMIN = 2
    """An admin key: moderation and player data too."""


@dataclass(frozen=True)
class Caller:
    role: Role = Role.ANONYMOUS
    actor: str | None = None
    """A short fingerprint of the key presented (never the key), naming the caller in logs."""


@dataclass
class Context:
    db: Db
    clock: Callable[[], datetime] = now
    """The service's notion of now (plays are stamped with it; periods are chosen by it)."""
    broker: Broker = field(default_factory=Broker)
    """Where plays announce the boards they changed (shared by the whole app)."""
    caller: Caller = field(default_factory=Caller)
    """Who the request's key says the caller is."""
    request_id: str = ""
    rank_index: RankIndex | None = None
    """The Redis rank index, when one is configured."""
    operation_name: str | None = None
    """Set once the operation is known, for the request's log line."""
    client_address: str = ""
    """Where the request came from (the peer, or the configured proxy hop's address)."""
    allowance: Allowance | None = None
    """The caller's allowance of cost points; None for a caller that is not throttled (one
    presenting an API key)."""
    capacity: Capacity | None = None
    """Where the operation reserves its cost before it executes; None: no bound."""
    cost: int | None = None
    """The operation's static cost, once computed."""
    on_push: Callable[[], object] | None = None
    """Called before each push of a subscription after the first (the WebSocket transport
    begins the push's own budget there)."""
    responses: ResponseCache | None = None
    """The process's cache of answers, when it keeps one: writes evict from it."""
    cache_answers: bool = False
    """Whether a query of this context may be answered from ``responses`` and stored there
    (one HTTP request's; a WebSocket's operations share their context and its loaders)."""
    dependencies: Dependencies | None = None
    """What the execution reads, recorded when its answer may be cached."""
    loaders: Loaders = field(init=False)

    ranks: RankSource = field(init=False)

    @property
    def authenticated(self) -> bool:
        """Whether the request presented a valid key, of either kind."""
        return self.caller.role is not Role.ANONYMOUS

    @property
    def admin(self) -> bool:
        """Whether the request presented an admin key."""
        return self.caller.role is Role.ADMIN

    def depends(self, dependency: Dependency) -> None:
        """The answer being built reads ``dependency`` (recorded when it may be cached)."""
        if self.dependencies is not None:
            self.dependencies.add(dependency)

    def consistent(self, board: str) -> bool:
        """Whether this execution reads ``board`` (its item, its first page) with
        ConsistentRead: when its answer may be stored in the response cache and this process
        wrote to the board lately (the answer then shows those writes)."""
        return self.dependencies is not None and self.broker.writes.recent(board)

    def uncacheable(self) -> None:
        """The answer being built reads something no dependency names: it is not cached."""
        if self.dependencies is not None:
            self.dependencies.uncacheable()

    def __post_init__(self) -> None:
        self.ranks = RankSource(self.db, self.rank_index)
        self.loaders = Loaders.create(self.db, self.ranks, consistent=self.consistent)

    def release(self) -> None:
        """The operation is answered: what its loaders hold (a page's entries, players,
        boards) is dropped now, freed as soon as nothing else refers to it, rather than when
        the garbage collector next finds the reference cycles that an execution leaves (the
        loaders refer to this context, and graphql-core's execution context to it). Later
        reads load again."""
        self.loaders.forget()

    def renew_loaders(self) -> None:
        """Forget everything loaded so far."""
        self.loaders = Loaders.create(self.db, self.ranks, consistent=self.consistent)

    def next_push(self) -> None:
        """A long-lived subscription is about to read for its next push: it forgets what it
        loaded, and the push gets a budget of its own."""
        self.renew_loaders()
        if self.on_push is not None:
            self.on_push()
