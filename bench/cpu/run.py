"""A run: the stack started and loaded, then every kind measured once a round for each round,
the kinds' order turned by one each round (with a baseline checkout, each kind sent to both
checkouts' services one after the other, which goes first alternating by round); or one kind
profiled."""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bench.core.procstat import tree_cpu_seconds
from bench.core.report import log
from bench.cpu.kinds import Kind, configurations_for, kinds
from bench.cpu.measure import Sample, measure_kind, send
from bench.cpu.profiling import profile_tables, profiled_service, switch_off, switch_on
from bench.cpu.results import BaselineResult, CpuResult, summarize
from bench.cpu.stack import Served, Stack, running_stack

__all__ = ["CpuOptions", "profile", "run"]


@dataclass(frozen=True)
class CpuOptions:
    """What a run measures: the board's size, the measured requests and the warm-up of each
    kind in each round, the rounds, the seed of every random choice, the output folder, and
    the kinds measured (every kind unless given), and the baseline checkout measured beside
    this one, if any."""

    entries: int = 1_000
    requests: int = 500
    warmup: int = 50
    rounds: int = 3
    seed: int = 7
    out: Path = Path("bench/results")
    only: tuple[str, ...] = ()
    """Keys of the kinds to measure; empty for every kind."""
    baseline: Path | None = None
    """Another checkout of this repository with its own ``.venv`` (``make install`` there)."""

    def settings(self) -> dict[str, object]:
        return {
            "entries": self.entries,
            "requests": self.requests,
            "warmup": self.warmup,
            "rounds": self.rounds,
            "seed": self.seed,
            "workers": 1,
        }


def _kinds(served: Mapping[str, Served], options: CpuOptions) -> list[Kind]:
    players = next(iter(served.values())).players
    found = kinds(players, options.entries, options.seed)
    return [k for k in found if (not options.only or k.key in options.only)]


@dataclass
class _Side:
    """One checkout's services, its kinds (each checkout its own, from the same seed: the
    same requests in the same order), the requests sent of each kind, and the samples."""

    label: str
    served: Mapping[str, Served]
    kinds: list[Kind]
    sent: dict[str, int] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)

    async def measure(
        self, http: aiohttp.ClientSession, index: int, options: CpuOptions, number: int
    ) -> None:
        kind = self.kinds[index]
        sample = await measure_kind(
            http,
            self.served[kind.configuration.key],
            kind,
            warmup=options.warmup,
            requests=options.requests,
            first=self.sent.get(kind.key, 0),
            round_number=number,
        )
        self.sent[kind.key] = self.sent.get(kind.key, 0) + options.warmup + options.requests
        hits = "" if sample.cache_hits is None else f", {sample.cache_hits} cache hits"
        log(
            f"[cpu] round {number}: {kind.key}{self.label}: {sample.cpu_ms_per_request:.2f} ms"
            f" CPU per request, p50 {sample.wall_p50_ms:.2f} ms{hits}"
        )
        self.samples.append(sample)


async def _rounds(sides: Sequence[_Side], options: CpuOptions) -> None:
    """Every kind once a round, the order turned by one each round; each kind sent to every
    side in turn, the sides' order reversed every other round."""
    count = len(sides[0].kinds)
    async with aiohttp.ClientSession() as http:
        for number in range(1, options.rounds + 1):
            turn = (number - 1) % count
            order = sides if number % 2 else sides[::-1]
            for index in [*range(turn, count), *range(turn)]:
                for side in order:
                    await side.measure(http, index, options, number)


def _commit(checkout: Path) -> str:
    """The short commit of ``checkout``'s HEAD, noting uncommitted changes to tracked files;
    'unknown' when git cannot tell."""
    git = ["git", "--no-optional-locks", "-C", str(checkout)]

    def output(*arguments: str) -> str:
        run = subprocess.run(
            [*git, *arguments], capture_output=True, text=True, check=True, timeout=30
        )
        return run.stdout.strip()

    try:
        head = output("rev-parse", "--short", "HEAD")
        changes = output("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not head:
        return "unknown"
    return f"{head} with uncommitted changes" if changes else head


def run(options: CpuOptions) -> CpuResult:
    """Start and load the stack, measure every kind for every round (against the baseline's
    services too, when there is one), and return the results."""
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    baseline = options.baseline.resolve() if options.baseline is not None else None
    with running_stack(
        configurations_for(options.only),
        entries=options.entries,
        seed_value=options.seed,
        baseline=baseline,
    ) as stack:
        sides = [_Side("", stack.served, _kinds(stack.served, options))]
        if stack.baseline:
            sides.append(_Side(" (baseline)", stack.baseline, _kinds(stack.baseline, options)))
        asyncio.run(_rounds(sides, options))
    this = sides[0]
    before = None
    if baseline is not None:
        before = BaselineResult(
            path=str(baseline),
            commit=_commit(baseline),
            checkout_commit=_commit(Path(__file__).resolve().parents[2]),
            kinds=summarize(sides[1].kinds, sides[1].samples),
            samples=sides[1].samples,
        )
    return CpuResult(
        machine=stack.machine,
        settings=options.settings(),
        setup=stack.setup,
        kinds=summarize(this.kinds, this.samples),
        samples=this.samples,
        load_average=(load_start, os.getloadavg()[0]),
        total_seconds=time.perf_counter() - started,
        baseline=before,
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
