"""A run: the stack started and loaded, then every kind measured once a round for each round,
the kinds' order turned by one each round; or one kind profiled."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.core.procstat import tree_cpu_seconds
from bench.core.report import log
from bench.cpu.kinds import Kind, configurations_for, kinds
from bench.cpu.measure import Sample, measure_kind, send
from bench.cpu.profiling import profile_tables, profiled_service, switch_off, switch_on
from bench.cpu.results import CpuResult, summarize
from bench.cpu.stack import Stack, running_stack

__all__ = ["CpuOptions", "profile", "run"]


@dataclass(frozen=True)
class CpuOptions:
    """What a run measures: the board's size, the measured requests and the warm-up of each
    kind in each round, the rounds, the seed of every random choice, the output folder, and
    the kinds measured (every kind unless given)."""

    entries: int = 1_000
    requests: int = 500
    warmup: int = 50
    rounds: int = 3
    seed: int = 7
    out: Path = Path("bench/results")
    only: tuple[str, ...] = ()
    """Keys of the kinds to measure; empty for every kind."""

    def settings(self) -> dict[str, object]:
        return {
            "entries": self.entries,
            "requests": self.requests,
            "warmup": self.warmup,
            "rounds": self.rounds,
            "seed": self.seed,
            "workers": 1,
        }


def _kinds(stack: Stack, options: CpuOptions) -> list[Kind]:
    players = next(iter(stack.served.values())).players
    found = kinds(players, options.entries, options.seed)
    return [k for k in found if (not options.only or k.key in options.only)]


async def _rounds(stack: Stack, chosen: Sequence[Kind], options: CpuOptions) -> list[Sample]:
    samples: list[Sample] = []
    sent = dict.fromkeys((k.key for k in chosen), 0)
    async with aiohttp.ClientSession() as http:
        for number in range(1, options.rounds + 1):
            turn = (number - 1) % len(chosen)
            for kind in [*chosen[turn:], *chosen[:turn]]:
                sample = await measure_kind(
                    http,
                    stack.served[kind.configuration.key],
                    kind,
                    warmup=options.warmup,
                    requests=options.requests,
                    first=sent[kind.key],
                    round_number=number,
                )
                sent[kind.key] += options.warmup + options.requests
                hits = "" if sample.cache_hits is None else f", {sample.cache_hits} cache hits"
                log(
                    f"[cpu] round {number}: {kind.key}: {sample.cpu_ms_per_request:.2f} ms CPU"
                    f" per request, p50 {sample.wall_p50_ms:.2f} ms{hits}"
                )
                samples.append(sample)
    return samples


def run(options: CpuOptions) -> CpuResult:
    """Start and load the stack, measure every kind for every round, and return the
    results."""
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    with running_stack(
        configurations_for(options.only), entries=options.entries, seed_value=options.seed
    ) as stack:
        chosen = _kinds(stack, options)
        samples = asyncio.run(_rounds(stack, chosen, options))
    return CpuResult(
        machine=stack.machine,
        settings=options.settings(),
        setup=stack.setup,
        kinds=summarize(chosen, samples),
        samples=samples,
        load_average=(load_start, os.getloadavg()[0]),
        total_seconds=time.perf_counter() - started,
    )


async def _profiled(stack: Stack, kind: Kind, options: CpuOptions, stats: Path) -> float:
    """Warm up, profile ``options.requests`` requests of ``kind``; the service's CPU
    milliseconds per request meanwhile, as ``/proc`` tells them."""
    served = stack.served[kind.configuration.key]
    pid = served.service.pid
    async with aiohttp.ClientSession() as http:
        for n in range(options.warmup):
            await send(http, served, kind, n)
        await asyncio.to_thread(switch_on, pid, stats)
        before = tree_cpu_seconds(pid)
        for n in range(options.warmup, options.warmup + options.requests):
            await send(http, served, kind, n)
        spent = tree_cpu_seconds(pid) - before
        await asyncio.to_thread(switch_off, pid, stats)
    return 1000 * spent / options.requests


def profile(options: CpuOptions, key: str, *, keep: Path | None = None) -> str:
    """Profile the requests of the kind ``key`` in the service process (see
    :mod:`bench.cpu.profiled_serve`); the report: the tables of
    :func:`~bench.cpu.profiling.profile_tables`. With ``keep``, the statistics are also
    written there (for pstats, snakeviz, ...)."""
    with tempfile.TemporaryDirectory(prefix="bench-cpu-profile-") as folder:
        stats = Path(folder) / "service.prof"
        configurations = configurations_for((key,))
        with running_stack(
            configurations,
            entries=options.entries,
            seed_value=options.seed,
            launch=profiled_service(stats),
        ) as stack:
            players = stack.served[configurations[0].key].players
            kind = next(k for k in kinds(players, options.entries, options.seed) if k.key == key)
            cpu_ms = asyncio.run(_profiled(stack, kind, options, stats))
        if keep is not None:
            keep.write_bytes(stats.read_bytes())
            log(f"wrote {keep}")
        return "\n".join(
            [
                f"# Profile: {kind.name} ({kind.configuration.name})",
                "",
                f"`leaderboard serve --workers 1` under cProfile (its clock the process's CPU"
                f" time), on a board of {options.entries:,} entries, {options.warmup} requests"
                f" of warm-up, then {options.requests} profiled; {cpu_ms:.2f} ms of CPU per"
                " request meanwhile, as /proc counts it. The profiler's own cost is in every"
                " number below, and weighs most on the functions called most often (see"
                " their calls); `python -m bench.cpu` measures the requests without it.",
                "",
                profile_tables(stats, requests=options.requests),
            ]
        )
