"""What the specification's rules cost each way a document can go: after the structural limits,
the fast path (:func:`edge.fast_rules.valid`) against the rules in full
(:func:`edge.rules.run_rules`), on a document parsed once, in CPU time; the two take turns, run
by run, so that the machine's load weighs on both alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graphql import parse

from bench.validation.documents import token_count
from edge.fast_rules import valid
from edge.limits import MAX_ERRORS, MAX_MERGE_WORK, structural_errors
from edge.rules import run_rules
from edge.schema import GRAPHQL_SCHEMA

__all__ = ["PathTiming", "measure_paths", "path_table"]


@dataclass(frozen=True)
class PathTiming:
    name: str
    tokens: int
    full_p50_ms: float
    """The structural limits and the rules in full."""
    fast_p50_ms: float
    """The structural limits and the fast path."""


def measure_paths(name: str, query: str, runs: int) -> PathTiming:
    """Both ways on a valid document (the fast path must be sure of it)."""
    document = parse(query)

    def full() -> None:
        list(structural_errors(document))
        run_rules(GRAPHQL_SCHEMA, document, MAX_ERRORS, merge_work=MAX_MERGE_WORK)

    def fast() -> None:
        list(structural_errors(document))
        if not valid(GRAPHQL_SCHEMA, document, MAX_MERGE_WORK):
            raise ValueError(f"the fast path is not sure of {name!r}")

    times: dict[Callable[[], None], list[float]] = {full: [], fast: []}
    for _ in range(runs):
        for way, spent in times.items():
            started = time.process_time()
            way()
            spent.append(time.process_time() - started)
    return PathTiming(
        name=name,
        tokens=token_count(query),
        full_p50_ms=statistics.median(times[full]) * 1000,
        fast_p50_ms=statistics.median(times[fast]) * 1000,
    )


def path_table(timings: Sequence[PathTiming]) -> list[str]:
    lines = [
        "| document | tokens | limits + rules in full, ms p50 | limits + fast path, ms p50 |",
        "|---|--:|--:|--:|",
    ]
    lines += [
        f"| {t.name} | {t.tokens} | {t.full_p50_ms:.2f} | {t.fast_p50_ms:.2f} |" for t in timings
    ]
    return lines
