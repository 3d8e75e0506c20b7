"""Running a fleet: the backends started and loaded once, then each configuration in turn
(the raw calls, or a fresh service process with its workers and cache), pre-warmed, measured
at every number of clients and, where asked, on the single kind at one client."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from bench.core.load.levels import LevelResult, level_line, measure_level
from bench.core.load.options import Options, settings_of
from bench.core.load.seeding import setup_of
from bench.core.load.stack import Backends, Stack, prewarm, running_backends
from bench.core.processes import service_process
from bench.core.report import log
from bench.fleet.configs import TOP100_MIX, Configuration, configurations
from bench.fleet.results import FleetResult, Measured

__all__ = ["FleetOptions", "run"]


@dataclass(frozen=True)
class FleetOptions:
    """The mixed workload's options, the service's workers in its multi-process
    configurations, and the single-kind run's warm-up and window."""

    options: Options
    workers: int
    single_duration: float
    single_warmup: float


@contextmanager
def _stack(backends: Backends, config: Configuration) -> Iterator[Stack]:
    """The stack of one configuration: the backends alone for the raw calls, else with a
    fresh ``leaderboard serve`` (stopped on leaving)."""
    if config.raw:
        yield backends.with_service(None)
        return
    with service_process(
        backends.endpoint_url,
        table=backends.table,
        redis_url=backends.redis_url,
        log_dir=backends.logs,
        environment=config.environment,
        workers=config.workers,
    ) as service:
        log(f"[fleet] {config.name}: service pid {service.pid}")
        yield backends.with_service(service)


def _measure(backends: Backends, config: Configuration, fleet: FleetOptions) -> Measured:
    options = fleet.options
    floor = backends.floor() if config.raw else None
    with _stack(backends, config) as stack:
        url = stack.service.url if stack.service is not None else ""
        failed = prewarm(
            backends.pool, url=url, options=options, seeded=backends.seeded, floor=floor
        )
        if failed:
            backends.notes.append(f"{config.name}: {failed} request(s) failed in the pre-warm.")
        levels: list[LevelResult] = []
        for number, clients in enumerate(options.clients):
            # The same level number draws the same kinds, players and scores in every
            # configuration.
            level, _, _ = measure_level(stack, options, clients, level=number, floor=floor)
            log(level_line(level, config.name))
            levels.append(level)
        single = None
        if config.single:
            alone = replace(options, duration=fleet.single_duration, warmup=fleet.single_warmup)
            single, _, _ = measure_level(
                stack, alone, 1, level=len(options.clients), mix=TOP100_MIX, floor=floor
            )
            log(level_line(single, f"{config.name}, top 100 alone"))
    return Measured(config.name, config.workers, config.cache, levels, single)


def run(fleet: FleetOptions) -> FleetResult:
    """Start and load the backends, measure every configuration, and return the results."""
    started = time.perf_counter()
    options = fleet.options
    generators = max(1, min(options.generators, max(options.clients)))
    with running_backends(options, workers=generators) as backends:
        measured = [_measure(backends, config, fleet) for config in configurations(fleet.workers)]
        notes = [
            *backends.notes,
            f"Load average (1 min) at the end: {os.getloadavg()[0]:.2f}.",
        ]
    settings = settings_of(options) | {
        "workers": fleet.workers,
        "single_duration_seconds": fleet.single_duration,
        "single_warmup_seconds": fleet.single_warmup,
    }
    return FleetResult(
        machine=backends.machine,
        settings=settings,
        setup=setup_of(backends.seeded),
        measured=measured,
        total_seconds=time.perf_counter() - started,
        notes=notes,
    )
