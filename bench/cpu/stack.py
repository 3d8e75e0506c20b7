"""What the requests are sent to: one fresh DynamoDB Local, a table of its own for each
configuration loaded with the benchmark's boards, and for each a ``leaderboard serve
--workers 1`` in its own process; with the response cache, a fresh redis-server and the rank
index's projector (``leaderboard rank-indexer``) beside it."""

from __future__ import annotations

import asyncio
import random
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.core.load.seeding import create_table_at, seed, setup_of
from bench.core.processes import ServiceProcess, rank_indexer, service_process
from bench.core.report import log, machine_info
from bench.core.servers import redis_version
from bench.cpu.kinds import Configuration
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from leaderboard.embedded_redis import EmbeddedRedis

__all__ = ["Launcher", "Served", "Stack", "running_stack"]

Launcher = Callable[..., AbstractContextManager[ServiceProcess]]
"""How a service is started: :func:`bench.core.processes.service_process`, or a launcher
taking the same arguments (``endpoint_url``; ``table``, ``redis_url``, ``log_dir``,
``environment`` by name)."""


@dataclass(frozen=True)
class Served:
    """One configuration's running service and the players loaded on its table."""

    configuration: Configuration
    service: ServiceProcess
    table: str
    players: list[str]


@dataclass(frozen=True)
class Stack:
    """Every configuration's service, the machine they run on, and how the boards were
    loaded."""

    served: Mapping[str, Served]
    """By configuration key."""
    machine: dict[str, Any]
    setup: dict[str, Any]


@contextmanager
def running_stack(
    configurations: Sequence[Configuration],
    *,
    entries: int,
    seed_value: int,
    launch: Launcher = service_process,
) -> Iterator[Stack]:
    """A fresh DynamoDB Local (and, when a configuration has the cache, a fresh redis-server),
    then per configuration a table loaded with ``entries`` players (the same players and
    scores in each: the same seed) and its service started with ``launch``; everything is
    stopped on leaving."""
    with ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-cpu-")))
        local = stack.enter_context(EmbeddedDynamoDB(default_cache_dir(), log_dir=logs))
        machine = machine_info(local)
        redis_url: str | None = None
        if any(c.cache for c in configurations):
            redis_url = stack.enter_context(EmbeddedRedis(log_dir=logs)).url
            machine["redis_server"] = redis_version(redis_url)
        served: dict[str, Served] = {}
        setup: dict[str, Any] = {}
        for config in configurations:
            folder = logs / config.key
            folder.mkdir()
            table = f"cpu-{config.key}-{uuid.uuid4().hex[:8]}"
            index_url = redis_url if config.cache else None
            asyncio.run(create_table_at(local.endpoint_url, table))
            if index_url is not None:
                indexer = rank_indexer(
                    local.endpoint_url, table=table, redis_url=index_url, log_dir=folder
                )
                stack.enter_context(indexer)
            seeded = asyncio.run(
                seed(local.endpoint_url, table, entries, index_url, random.Random(seed_value))
            )
            setup = setup_of(seeded)
            service = stack.enter_context(
                launch(
                    local.endpoint_url,
                    table=table,
                    redis_url=index_url,
                    log_dir=folder,
                    environment=config.environment,
                )
            )
            log(f"[cpu] {config.name}: service pid {service.pid} at {service.url}")
            players = [p.player_id for p in seeded.players]
            served[config.key] = Served(config, service, table, players)
        yield Stack(served, machine, setup)
