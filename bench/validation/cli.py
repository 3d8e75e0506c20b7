"""``python -m bench.validation [--runs N] [--out bench/results]``: what parsing and validating
the worst documents the limits allow costs, and what refusing the ones they do not allow costs.

Each document is checked ``--runs`` times without the cache (a cold check: parse, structural
limits, then the specification's rules, as :func:`gql.validation.check_document` does for a
document not seen before), then once more through a warm cache. For comparison, the document
of 4,000 ``__typename`` tokens is also validated the way the service once did (the parser's
token limit of 4,000 and every specified rule, no structural limits).

Prints a Markdown table and writes ``validation.json`` and ``validation.md`` to ``--out``; the
exit status is 1 when an allowed document's cold p50 is over :data:`TARGET_P50_MS`.
"""

from __future__ import annotations

import argparse
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
from gql.schema import GRAPHQL_SCHEMA
from gql.validation import (
    MAX_ALIASES,
    MAX_CHARACTERS,
    MAX_DEPTH,
    MAX_ERRORS,
    MAX_FRAGMENTS,
    MAX_OPERATIONS,
    MAX_SAME_NAME,
    MAX_SPREADS,
    MAX_TOKENS,
    Documents,
    check_document,
)

__all__ = ["TARGET_P50_MS", "DocumentTiming", "main"]

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


def measure_before(runs: int) -> DocumentTiming:
    """The 4,000-token document as the service once validated it: every rule, no limits."""
    graphql_schema = GRAPHQL_SCHEMA
    query = "{ " + "__typename " * 3998 + "}"

    def check() -> object:
        return validate(graphql_schema, parse(query, max_tokens=4000), specified_rules)

    cold = _times(check, runs)
    return DocumentTiming(
        name="before: 4,000 __typename tokens, parsed and validated by every rule",
        characters=len(query),
        tokens=token_count(query),
        outcome="valid",
        errors=0,
        cold_p50_ms=statistics.median(cold) * 1000,
        cold_p99_ms=_percentile(cold, 0.99) * 1000,
        cold_max_ms=cold[-1] * 1000,
        cached_p50_us=0.0,
    )


def markdown(timings: Sequence[DocumentTiming], before: DocumentTiming, runs: int) -> str:
    allowed = [t for t in timings if t.outcome == "valid"]
    worst = max(allowed, key=lambda t: t.cold_p50_ms)
    met = worst.cold_p50_ms <= TARGET_P50_MS
    lines = [
        "# Validation cost of the worst documents",
        "",
        f"- Machine: {os.cpu_count()} cores ({platform.platform()}), Python"
        f" {platform.python_version()}; shared with other work, so the tails are noisy",
        f"- Limits: {MAX_CHARACTERS} characters, {MAX_TOKENS} tokens, depth {MAX_DEPTH},"
        f" {MAX_ALIASES} aliases, {MAX_OPERATIONS} operations, {MAX_FRAGMENTS} fragments,"
        f" {MAX_SPREADS} spreads and {MAX_SAME_NAME} same-named fields per selection set,"
        f" {MAX_ERRORS} errors",
        f"- Each document checked {runs} times cold (parse, limits, rules), then through a"
        " warm cache",
        f"- Worst allowed document: {worst.name}, cold p50 {worst.cold_p50_ms:.2f} ms:"
        f" {'met' if met else 'NOT met'} (target: at most {TARGET_P50_MS:g} ms)",
        f"- Before (no structural limits, 4,000 tokens): {before.cold_p50_ms:.1f} ms p50,"
        f" {before.cold_p99_ms:.1f} ms p99 for {before.tokens} tokens of `__typename`",
        "",
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
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.validation", description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="cold checks per document")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    options = parser.parse_args(argv)
    timings = []
    for name, query in worst_documents():
        log(f"validation: {name}")
        timings.append(measure(name, query, options.runs))
    before = measure_before(max(5, options.runs // 20))
    report = markdown(timings, before, options.runs)
    document: dict[str, Any] = {
        "runs": options.runs,
        "target_p50_ms": TARGET_P50_MS,
        "documents": [asdict(t) for t in timings],
        "before": asdict(before),
    }
    save_results(options.out, "validation", document, report)
    print(report, flush=True)
    allowed = [t.cold_p50_ms for t in timings if t.outcome == "valid"]
    return 0 if max(allowed) <= TARGET_P50_MS else 1
