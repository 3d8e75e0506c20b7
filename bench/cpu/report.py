"""What a run writes: ``cpu.json`` (every sample and summary) and ``cpu.md`` (how it was
measured, the table, and the verdict against the targets); with a baseline checkout, its
numbers beside this checkout's and the change from them."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from bench.core.report import machine_lines, save_results
from bench.cpu.results import BaselineResult, CpuResult, KindSummary

__all__ = [
    "CACHE_HIT_TARGET_RATIO",
    "TOP20_TARGET_RATIO",
    "TOP100_TARGET_RATIO",
    "cpu_markdown",
    "cpu_table",
    "targets",
    "write_results",
]

TOP100_TARGET_RATIO = 5.0
"""Target: the uncached top-100 page at most this many times ``{ __typename }``'s CPU."""
TOP20_TARGET_RATIO = 3.0
"""Target: the uncached top-20 page at most this many times ``{ __typename }``'s CPU."""
CACHE_HIT_TARGET_RATIO = 1.5
"""Target: the top-100 page from the response cache at most this many times
``{ __typename }``'s CPU (uncached)."""

_TARGETS = (
    ("top100", "Top 100, not cached", TOP100_TARGET_RATIO),
    ("top20", "Top 20, not cached", TOP20_TARGET_RATIO),
    ("top100-hit", "Top 100 from the response cache", CACHE_HIT_TARGET_RATIO),
)


def _hits(kind: KindSummary) -> str:
    if kind.cache_hits is None or kind.cache_misses is None:
        return "-"
    return f"{kind.cache_hits:,} / {kind.cache_hits + kind.cache_misses:,}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _against(kind: KindSummary, baseline: BaselineResult) -> list[str]:
    """The baseline's cells of ``kind``'s row: its CPU per request, its ratio and the change
    (this checkout's CPU over the baseline's)."""
    before = baseline.kind(kind.key)
    if before is None:
        return ["-", "-", "-"]
    change = (
        f"{kind.cpu_ms_per_request / before.cpu_ms_per_request:.2f}x"
        if before.cpu_ms_per_request
        else "-"
    )
    return [f"{before.cpu_ms_per_request:.2f} ms", _ratio(before.ratio), change]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def cpu_table(result: CpuResult) -> list[str]:
    """One row per kind: the median CPU per request, its range over the rounds, its ratio to
    ``{ __typename }`` (with a baseline, the baseline's median and ratio and the change from
    it), the client's p50 and the cache's hits."""
    baseline = result.baseline
    against = (
        []
        if baseline is None
        else ["baseline CPU / request", "baseline ratio", "change (after / before)"]
    )
    head = [
        "request",
        "configuration",
        "CPU / request",
        "rounds: min - max",
        "ratio to `{ __typename }`",
        *against,
        "wall p50 (client)",
        "cache hits / lookups",
    ]
    lines = [_row(head), "|---|---|" + "--:|" * (len(head) - 2)]
    for kind in result.kinds:
        lines.append(
            _row(
                [
                    kind.name,
                    kind.configuration,
                    f"{kind.cpu_ms_per_request:.2f} ms",
                    f"{kind.cpu_ms_min:.2f} - {kind.cpu_ms_max:.2f}",
                    _ratio(kind.ratio),
                    *([] if baseline is None else _against(kind, baseline)),
                    f"{kind.wall_p50_ms:.2f} ms",
                    _hits(kind),
                ]
            )
        )
    return lines


def targets(result: CpuResult) -> list[str]:
    """The "Against the targets" bullet points (a target whose kind was not measured says
    so)."""
    lines = []
    for key, label, target in _TARGETS:
        kind = result.kind(key)
        if kind is None or kind.ratio is None:
            lines.append(f"- {label}: not measured in this run")
            continue
        verdict = "met" if kind.ratio <= target else "NOT met"
        lines.append(
            f"- {label}: {kind.cpu_ms_per_request:.2f} ms, {kind.ratio:.1f}x `{{ __typename }}`:"
            f" {verdict} (target: at most {target:g}x)"
        )
    return lines


def _method(result: CpuResult) -> str:
    s = result.settings
    return (
        "How it was measured: `leaderboard serve --workers 1` ran in a process of its own, in"
        " each configuration on a table of its own in one fresh DynamoDB Local (in memory):"
        " without Redis, where the response cache is off and a rank is a COUNT query of the"
        " table, and with a fresh redis-server (the rank index, fed by `leaderboard"
        " rank-indexer`, and the change feed), where the response cache is on (64 MB). One"
        " client sent each kind's requests one at a time over one keep-alive connection, with"
        f" the benchmark's API key: {s['warmup']} unmeasured requests, then {s['requests']}"
        " measured, the service process's CPU time (user and system, every thread, from"
        " `/proc/<pid>/stat`) read just before and just after them; CPU per request is the"
        " difference over the requests. Every kind was measured once a round, for"
        f" {s['rounds']} round{'s' if s['rounds'] != 1 else ''}, the kinds' order turned by"
        " one each round; the table gives"
        " each kind's median over the rounds and its range, and the ratio of that median to"
        " the median of `{ __typename }` without the cache, measured in the same run. Reads"
        " ask for random players; each play is the next player's, with a random score, so"
        " that every play is valid. With the cache, the same top-100 page is asked for again"
        " and again: after the first, answers come from the cache (the hits and lookups"
        " are the service's own counters, from `/metrics` before and after the measured"
        " requests; an answer is kept at most 30 s, so a round may count a miss), and"
        " `{ __typename }` is a cache hit there too. The wall p50 is each round's median"
        " time at the client, the median over the rounds: information only, the client,"
        " DynamoDB Local and Redis sharing the machine's cores." + _baseline_method(result.baseline)
    )


def _baseline_method(baseline: BaselineResult | None) -> str:
    if baseline is None:
        return ""
    return (
        " Each kind was also sent, in the same rounds, to the services of the baseline"
        " checkout (its own `.venv`'s `leaderboard serve` and, with the cache, its own"
        " `leaderboard rank-indexer` and rank-index rebuild), each configuration on a table"
        " of its own in the same DynamoDB Local, loaded with the same players and scores:"
        " every kind went to both services one after the other, this checkout's first in odd"
        " rounds and the baseline's first in even ones, with the same requests, so that the"
        " machine's load weighs on both alike. The baseline's columns are its medians and"
        " ratios, measured the same way; the change is this checkout's median over the"
        " baseline's (below 1: less CPU than the baseline)."
    )


def _setup_lines(result: CpuResult) -> list[str]:
    boards = ", ".join(f"{board} {count:,}" for board, count in result.setup["boards"].items())
    start, end = result.load_average
    lines = machine_lines(result.machine)
    if result.baseline is not None:
        lines.append(
            f"- This checkout (after): commit {result.baseline.checkout_commit}; the baseline"
            f" (before): `{result.baseline.path}`, commit {result.baseline.commit}"
        )
    if "redis_server" in result.machine:
        lines.append(f"- Redis {result.machine['redis_server']} in memory, on the same machine")
    return [
        *lines,
        f"- The machine's 1-minute load average: {start:.2f} at the start, {end:.2f} at the"
        f" end ({result.machine.get('cpu_count', '?')} cores, shared with every process of"
        " the run and any other work)",
        f"- Data: boards {boards} players, every player named, loaded with"
        " BatchWriteItem as first plays leave them; the same players and scores in each"
        " configuration's table",
    ]


def cpu_markdown(result: CpuResult) -> str:
    """The whole report."""
    lines = [
        "# CPU per request",
        "",
        *_setup_lines(result),
        "",
        _method(result),
        "",
        *cpu_table(result),
        "",
        "## Against the targets",
        "",
        *targets(result),
        "",
    ]
    if result.notes:
        lines += ["## Notes", "", *[f"- {note}" for note in result.notes], ""]
    lines.append(f"Total run time: {result.total_seconds:.1f} s.")
    return "\n".join(lines) + "\n"


def write_results(out: Path, result: CpuResult) -> str:
    """Write ``cpu.json`` and ``cpu.md`` into ``out``; the Markdown."""
    markdown = cpu_markdown(result)
    document = asdict(result)
    if result.baseline is None:
        del document["baseline"]
    save_results(out, "cpu", document, markdown)
    return markdown
