"""Running the mixed workload: the stack set up, every level run in turn (and the profiled one,
if asked)."""

from __future__ import annotations

import time

from bench.core.load.hotspots import HotspotReport
from bench.core.load.levels import LevelResult, level_line, measure_level
from bench.core.load.options import Options, settings_of
from bench.core.load.seeding import setup_of
from bench.core.load.stack import running_stack
from bench.core.report import log
from bench.mixed.results import MixedResult

__all__ = ["run"]


def run(options: Options) -> MixedResult:
    """Set up the stack, run every level (and the profiled one, if asked) and return the
    results."""
    started = time.perf_counter()
    workers = max(1, min(options.generators, max(options.clients)))
    with running_stack(options, workers=workers) as stack:
        levels: list[LevelResult] = []
        for number, clients in enumerate(options.clients):
            level, _, _ = measure_level(stack, options, clients, level=number)
            log(level_line(level))
            levels.append(level)
        hotspots: HotspotReport | None = None
        if options.profile is not None:
            options.out.mkdir(parents=True, exist_ok=True)
            level, hotspots, _ = measure_level(
                stack,
                options,
                options.profile,
                level=len(options.clients),
                profile_to=options.out / f"profile-{options.profile}.txt",
            )
            log(level_line(level))
            levels.append(level)
        peak = stack.peak_rss_mib()
        log_bytes = stack.serving.log_path.stat().st_size
    return MixedResult(
        machine=stack.machine,
        settings=settings_of(options),
        setup=setup_of(stack.seeded),
        levels=levels,
        service_peak_rss_mib=peak,
        service_log_bytes=log_bytes,
        total_seconds=time.perf_counter() - started,
        hotspots=hotspots,
        notes=stack.notes,
    )
