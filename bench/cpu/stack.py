"""What the requests are sent to: one fresh DynamoDB Local, a table of its own for each
configuration loaded with the benchmark's boards, and for each a ``leaderboard serve
--workers 1`` in its own process; with the response cache, a fresh redis-server and the rank
index's projector (``leaderboard rank-indexer``) beside it. With a baseline, another checkout
of this repository, each configuration also gets a second table, loaded alike, and that
checkout's own service (and projector) on it."""

from __future__ import annotations

import asyncio
import random
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench.core.load.seeding import Seeded, create_table_at, seed, setup_of
from bench.core.processes import (
    ServiceProcess,
    rank_index_rebuild,
    rank_indexer,
    service_process,
)
from bench.core.report import log, machine_info
from bench.core.servers import redis_version
from bench.core.workload import PROFILE_BOARDS
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
    baseline: Mapping[str, Served] = field(default_factory=dict)
    """The baseline checkout's services, by configuration key (none without a baseline)."""


def _serve(
    stack: ExitStack,
    endpoint_url: str,
    config: Configuration,
    *,
    redis_url: str | None,
    folder: Path,
    entries: int,
    seed_value: int,
    launch: Launcher,
    checkout: Path | None,
) -> tuple[Served, Seeded]:
    """A fresh table for ``config`` loaded with the boards, its projector with the cache,
    and its service started with ``launch``. With ``checkout``, the projector is that
    checkout's, and so is the rank index's rebuild after the load (the loader's own rebuild
    writes this checkout's format)."""
    folder.mkdir()
    side = "" if checkout is None else "baseline-"
    table = f"cpu-{side}{config.key}-{uuid.uuid4().hex[:8]}"
    index_url = redis_url if config.cache else None
    asyncio.run(create_table_at(endpoint_url, table))
    if index_url is not None:
        indexer = rank_indexer(
            endpoint_url, table=table, redis_url=index_url, log_dir=folder, checkout=checkout
        )
        stack.enter_context(indexer)
    loader_index = index_url if checkout is None else None
    seeded = asyncio.run(
        seed(endpoint_url, table, entries, loader_index, random.Random(seed_value))
    )
    if index_url is not None and checkout is not None:
        for board in PROFILE_BOARDS:
            rank_index_rebuild(
                endpoint_url,
                table=table,
                redis_url=index_url,
                board=board,
                log_dir=folder,
                checkout=checkout,
            )
    service = stack.enter_context(
        launch(
            endpoint_url,
            table=table,
            redis_url=index_url,
            log_dir=folder,
            environment=config.environment,
        )
    )
    where = "" if checkout is None else f" (baseline {checkout})"
    log(f"[cpu] {config.name}{where}: service pid {service.pid} at {service.url}")
    players = [p.player_id for p in seeded.players]
    return Served(config, service, table, players), seeded


@contextmanager
def running_stack(
    configurations: Sequence[Configuration],
    *,
    entries: int,
    seed_value: int,
    launch: Launcher = service_process,
    baseline: Path | None = None,
) -> Iterator[Stack]:
    """A fresh DynamoDB Local (and, when a configuration has the cache, a fresh redis-server),
    then per configuration a table loaded with ``entries`` players (the same players and
    scores in each: the same seed) and its service started with ``launch``; with
    ``baseline``, another checkout of this repository, a second table for each, loaded
    alike, and the service of that checkout (its ``.venv``'s ``leaderboard``); everything
    is stopped on leaving."""
    with ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-cpu-")))
        local = stack.enter_context(EmbeddedDynamoDB(default_cache_dir(), log_dir=logs))
        machine = machine_info(local)
        redis_url: str | None = None
        if any(c.cache for c in configurations):
            redis_url = stack.enter_context(EmbeddedRedis(log_dir=logs)).url
            machine["redis_server"] = redis_version(redis_url)
        served: dict[str, Served] = {}
        before: dict[str, Served] = {}
        setup: dict[str, Any] = {}
        for config in configurations:
            serve = partial(
                _serve,
                stack,
                local.endpoint_url,
                config,
                redis_url=redis_url,
                entries=entries,
                seed_value=seed_value,
            )
            served[config.key], seeded = serve(
                folder=logs / config.key, launch=launch, checkout=None
            )
            setup = setup_of(seeded)
            if baseline is not None:
                before[config.key], _ = serve(
                    folder=logs / f"baseline-{config.key}",
                    launch=partial(service_process, checkout=baseline),
                    checkout=baseline,
                )
        yield Stack(served, machine, setup, before)
