"""``python -m bench.validation [--runs N] [--out bench/results] [--before FILE]``: what parsing
and validating the worst documents the limits allow costs, and what refusing the ones they do
not allow costs.

Each document (:mod:`bench.validation.documents`, built from the limits) is checked ``--runs``
times without the cache (a cold check: parse, structural limits, then the specification's
rules, as :func:`edge.validation.check_document` does for a document not seen before), then once
more through a warm cache. Each allowed document is also validated both ways the rules can go
(:mod:`bench.validation.paths`): the fast path, and the rules in full. For comparison, the
document of 4,000 ``__typename`` tokens is also validated the way the service once did (the
parser's token limit of 4,000 and every specified rule, no structural limits).

Prints a Markdown table and writes ``validation.json`` and ``validation.md`` to ``--out``. With
``--before`` (by default ``validation-before.json`` in ``--out``, when there is one), the report
also shows that earlier run's table, under its own limits: the numbers before a change of the
limits, next to the numbers after it. The exit status is 1 when an allowed document's cold p50
is over :data:`TARGET_P50_MS`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from graphql import (
    parse,
    specified_rules,
    validate,
)

from bench.core.report import log, save_results
from bench.validation.documents import token_count, worst_documents
from bench.validation.paths import PathTiming, measure_paths, path_table
from edge.document_cache import Documents
from edge.schema import GRAPHQL_SCHEMA
from edge.validation import (
    MAX_ALIASES,
    MAX_CHARACTERS,
    MAX_DEPTH,
    MAX_ERRORS,
    MAX_FRAGMENTS,
    MAX_MERGE_WORK,
    MAX_OPERATIONS,
    MAX_SAME_NAME,
    MAX_SPREADS,
    MAX_TOKENS,
    check_document,
)

__all__ = ["TARGET_P50_MS", "DocumentTiming", "EarlierRun", "limits", "main", "markdown"]

TARGET_P50_MS = 5.0
"""Target: the cold check of every allowed document at most this, p50."""


@dataclass(frozen=True)
class DocumentTiming:
    name: str
    characters: int
    tokens: int
    outcome: str
    """"valid", or the first error's message."""
    errors: int
    cold_p50_ms: float
    cold_p99_ms: float
    cold_max_ms: float
    cached_p50_us: float


def _times(check: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        check()
        times.append(time.perf_counter() - started)
    return sorted(times)


def _percentile(times: list[float], share: float) -> float:
    return times[min(len(times) - 1, round(share * (len(times) - 1)))]


def measure(name: str, query: str, runs: int) -> DocumentTiming:
    graphql_schema = GRAPHQL_SCHEMA
    checked = check_document(graphql_schema, query)
    cold = _times(lambda: check_document(graphql_schema, query), runs)
    documents = Documents()
    documents.check(graphql_schema, query)
    cached = _times(lambda: documents.check(graphql_schema, query), runs)
    return DocumentTiming(
        name=name,
        characters=len(query),
        tokens=token_count(query),
        outcome=checked.errors[0].message if checked.errors else "valid",
        errors=len(checked.errors),
        cold_p50_ms=statistics.median(cold) * 1000,
        cold_p99_ms=_percentile(cold, 0.99) * 1000,
        cold_max_ms=cold[-1] * 1000,
        cached_p50_us=statistics.median(cached) * 1e6,
    )


def measure_unlimited(runs: int) -> DocumentTiming:
    """The 4,000-token document as the service once validated it: every rule, no limits."""
    graphql_schema = GRAPHQL_SCHEMA
    query = "{ " + "__typename " * 3998 + "}"

    def check() -> object:
        return validate(graphql_schema, parse(query, max_tokens=4000), specified_rules)

    cold = _times(check, runs)
    return DocumentTiming(
        name="without limits: 4,000 __typename tokens, parsed and validated by every rule",
        characters=len(query),
        tokens=token_count(query),
        outcome="valid",
        errors=0,
        cold_p50_ms=statistics.median(cold) * 1000,
        cold_p99_ms=_percentile(cold, 0.99) * 1000,
        cold_max_ms=cold[-1] * 1000,
        cached_p50_us=0.0,
    )


def limits() -> dict[str, int]:
    """The limits the documents were built from and checked against."""
    return {
        "characters": MAX_CHARACTERS,
        "tokens": MAX_TOKENS,
        "depth": MAX_DEPTH,
        "aliases": MAX_ALIASES,
        "operations": MAX_OPERATIONS,
        "fragments": MAX_FRAGMENTS,
        "spreads": MAX_SPREADS,
        "same_name": MAX_SAME_NAME,
        "merge_work": MAX_MERGE_WORK,
        "errors": MAX_ERRORS,
    }


def _limits_line(limits: dict[str, int]) -> str:
    merge = limits.get("merge_work")
    return (
        f"{limits['characters']} characters, {limits['tokens']} tokens, depth"
        f" {limits['depth']}, {limits['aliases']} aliases, {limits['operations']} operations,"
        f" {limits['fragments']} fragments, {limits['spreads']} spreads and"
        f" {limits['same_name']} same-named fields per selection set"
        + (f", {merge} units of merge checks" if merge else "")
        + f", {limits['errors']} errors"
    )


def _worst_allowed(timings: Sequence[DocumentTiming]) -> DocumentTiming:
    return max((t for t in timings if t.outcome == "valid"), key=lambda t: t.cold_p50_ms)


def _table(timings: Sequence[DocumentTiming]) -> list[str]:
    lines = [
        "| document | chars | tokens | outcome | cold p50 ms | cold p99 ms | cached p50 µs |",
        "|---|--:|--:|---|--:|--:|--:|",
    ]
    for t in timings:
        outcome = "valid" if t.outcome == "valid" else f"refused: {t.outcome[:70]}"
        if t.errors > 1:
            outcome += f" (+{t.errors - 1})"
        lines.append(
            f"| {t.name} | {t.characters} | {t.tokens} | {outcome} | {t.cold_p50_ms:.2f} |"
            f" {t.cold_p99_ms:.2f} | {t.cached_p50_us:.1f} |"
        )
    return lines


@dataclass(frozen=True)
class EarlierRun:
    """A run saved before a change of the limits: its limits, its machine's load and its
    documents."""

    limits: dict[str, int]
    load: str
    code: str
    """Which code it measured (a commit)."""
    timings: list[DocumentTiming]

    @classmethod
    def read(cls, path: Path) -> EarlierRun:
        saved = json.loads(path.read_text())
        return cls(
            limits=saved["limits"],
            load=saved.get("load", "not recorded"),
            code=saved.get("code", "not recorded"),
            timings=[DocumentTiming(**t) for t in saved["documents"]],
        )


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def markdown(
    timings: Sequence[DocumentTiming],
    unlimited: DocumentTiming,
    runs: int,
    load: str,
    before: EarlierRun | None = None,
    paths: Sequence[PathTiming] = (),
) -> str:
    worst = _worst_allowed(timings)
    met = worst.cold_p50_ms <= TARGET_P50_MS
    lines = [
        "# Validation cost of the worst documents",
        "",
        f"- Machine: {os.cpu_count()} cores ({platform.platform()}), Python"
        f" {platform.python_version()}; shared with other work, so the tails are noisy (load"
        f" average 1 / 5 / 15 min at the start: {load})",
        f"- Limits: {_limits_line(limits())}",
        f"- Each document checked {runs} times cold (parse, limits, rules), then through a"
        " warm cache",
        f"- Worst allowed document: {worst.name}, cold p50 {worst.cold_p50_ms:.2f} ms:"
        f" {'met' if met else 'NOT met'} (target: at most {TARGET_P50_MS:g} ms)",
        f"- Without limits (4,000 tokens, every rule, as the service once validated):"
        f" {unlimited.cold_p50_ms:.1f} ms p50, {unlimited.cold_p99_ms:.1f} ms p99 for"
        f" {unlimited.tokens} tokens of `__typename`",
    ]
    if before is not None:
        earlier = _worst_allowed(before.timings)
        lines.append(
            f"- Before (the saved run under the earlier limits, below): worst allowed"
            f" document {earlier.name}, cold p50 {earlier.cold_p50_ms:.2f} ms"
        )
    lines += ["", "## After: this run", "", *_table(timings)]
    if paths:
        lines += [
            "",
            "## The rules, each way",
            "",
            "Each allowed document parsed once, then its structural limits and the rules in"
            " full, or its structural limits and the fast path, taking turns, "
            f"{runs} times each (CPU time):",
            "",
            *path_table(paths),
        ]
    if before is not None:
        lines += [
            "",
            "## Before: the saved run, under the earlier limits",
            "",
            f"- Code: {before.code}; load average at the start: {before.load}",
            f"- Limits: {_limits_line(before.limits)}",
            "",
            *_table(before.timings),
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.validation", description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="cold checks per document")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="validation.json of an earlier run, shown as 'before' (default: the"
        " validation-before.json in --out, if there is one)",
    )
    options = parser.parse_args(argv)
    before_path = options.before or options.out / "validation-before.json"
    before = EarlierRun.read(before_path) if before_path.exists() else None
    load = _load()
    timings = []
    for name, query in worst_documents():
        log(f"validation: {name}")
        timings.append(measure(name, query, options.runs))
    paths = [
        measure_paths(name, query, options.runs)
        for (name, query), timing in zip(worst_documents(), timings, strict=True)
        if timing.outcome == "valid"
    ]
    unlimited = measure_unlimited(max(5, options.runs // 20))
    report = markdown(timings, unlimited, options.runs, load, before, paths)
    document: dict[str, Any] = {
        "runs": options.runs,
        "target_p50_ms": TARGET_P50_MS,
        "limits": limits(),
        "load": load,
        "documents": [asdict(t) for t in timings],
        "paths": [asdict(t) for t in paths],
        "unlimited": asdict(unlimited),
    }
    save_results(options.out, "validation", document, report)
    print(report, flush=True)
    allowed = [t.cold_p50_ms for t in timings if t.outcome == "valid"]
    return 0 if max(allowed) <= TARGET_P50_MS else 1
