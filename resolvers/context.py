"""The per-request context handed to every resolver."""

from __future__ import annotations

from dataclasses import dataclass, field

from dynamo.table import Db
from resolvers.loaders import Loaders

__all__ = ["Context"]


@dataclass
class Context:
    db: Db
    loaders: Loaders = field(init=False)

    def __post_init__(self) -> None:
        self.loaders = Loaders.create(self.db)
