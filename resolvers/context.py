"""The per-request context handed to every resolver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from dynamo.table import Db, now
from rankindex.index import RankIndex
from resolvers.broker import Broker
from resolvers.loaders import Loaders
from resolvers.rank_source import RankSource

__all__ = ["Context"]


@dataclass
class Context:
    db: Db
    clock: Callable[[], datetime] = now
    """The service's notion of now (plays are stamped with it; periods are chosen by it)."""
    broker: Broker = field(default_factory=Broker)
    """Where plays announce the boards they changed (shared by the whole app)."""
    authenticated: bool = False
    """Whether the request presented a valid API key."""
    request_id: str = ""
    rank_index: RankIndex | None = None
    """The Redis rank index, when one is configured."""
    operation_name: str | None = None
    """Set once the operation is known, for the request's log line."""
    loaders: Loaders = field(init=False)

    ranks: RankSource = field(init=False)

    def __post_init__(self) -> None:
        self.ranks = RankSource(self.db, self.rank_index)
        self.loaders = Loaders.create(self.db, self.ranks)

    def renew_loaders(self) -> None:
        """Forget everything loaded so far (a long-lived subscription does, before each push)."""
        self.loaders = Loaders.create(self.db, self.ranks)
