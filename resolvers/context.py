"""The per-request context handed to every resolver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from dynamo.table import Db, now
from resolvers.broker import Broker
from resolvers.loaders import Loaders

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
    operation_name: str | None = None
    """Set once the operation is known, for the request's log line."""
    loaders: Loaders = field(init=False)

    def __post_init__(self) -> None:
        self.loaders = Loaders.create(self.db)

    def renew_loaders(self) -> None:
        """Forget everything loaded so far (a long-lived subscription does, before each push)."""
        self.loaders = Loaders.create(self.db)
