"""What a season-close run writes: ``season_close.json`` (every number) and ``season_close.md``
(per board: its close step by step, what its items take to store by kind, and what its final
standings take to read)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.core.measure import format_calls
from bench.core.report import machine_lines, run_document, save_results
from bench.core.sizes import ITEM_OVERHEAD_BYTES
from bench.season_close.run import PAGE, CloseRun
from bench.season_close.units import Units
from dynamo.closing import RESULT_PAGE
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.leaderboards import ENTRY_COUNT_SHARD, PARTITIONED_ENTRY_COUNT_SHARD
from dynamo.results import RESULT
from dynamo.scores import PARTITIONED_SCORE, SCORE

__all__ = ["LIVE_KINDS", "markdown", "run_markdown", "write_results"]

LIVE_KINDS = frozenset(
    e.name
    for e in (
        SCORE,
        PARTITIONED_SCORE,
        ENTRY_GUARD,
        ENTRY_COUNT_SHARD,
        PARTITIONED_ENTRY_COUNT_SHARD,
    )
)
"""The items of the live board its close freezes: its entries, their guards, its count
shards."""


def _partitions(n: int) -> str:
    return f"{n} partition{'s' if n > 1 else ''}"


def _units(value: float) -> str:
    return f"{value:,.1f}".removesuffix(".0")


def _steps_table(run: CloseRun) -> list[str]:
    lines = [
        "| step | seconds | entrants/s | DynamoDB calls | read units | write units"
        " | index write units | failed conditional writes |",
        "|---|--:|--:|---|--:|--:|--:|--:|",
    ]

    def row(name: str, seconds: float, units: Units, per_second: str) -> str:
        return (
            f"| {name} | {seconds:,.1f} | {per_second} | {format_calls(units.calls)}"
            f" | {_units(units.read)} | {_units(units.write)} | {_units(units.index_write)}"
            f" | {units.failed:,} |"
        )

    for n, step in enumerate(run.steps):
        # The first step's time goes with the board's count shards, not with its entrants.
        rate = f"{run.entrants / step.seconds:,.0f}" if n and step.seconds > 0 else "—"
        lines.append(row(step.step, step.seconds, step.units, rate))
    lines.append(
        row(
            "**the whole close**",
            run.close_seconds,
            run.units,
            f"**{run.entrants_per_second:,.0f}**",
        )
    )
    return lines


def _storage_table(run: CloseRun) -> list[str]:
    lines = [
        "| items | count | bytes | billed bytes | billed bytes per entrant |",
        "|---|--:|--:|--:|--:|",
    ]

    def row(name: str, count: int, data: int, billed: int) -> str:
        return f"| {name} | {count:,} | {data:,} | {billed:,} | {billed / run.entrants:,.0f} |"

    for kind in run.storage.kinds:
        lines.append(row(kind.kind, kind.items, kind.bytes, kind.billed_bytes))
    for name, chosen in (
        ("**the live board** (its Score items, entry guards, count shards)", LIVE_KINDS),
        ("**the final standings** (its Result items)", frozenset({RESULT.name})),
    ):
        kinds = [k for k in run.storage.kinds if k.kind in chosen]
        lines.append(
            row(
                name,
                sum(k.items for k in kinds),
                sum(k.bytes for k in kinds),
                sum(k.billed_bytes for k in kinds),
            )
        )
    return lines


def _reads_table(run: CloseRun) -> list[str]:
    lines = ["| read | items | DynamoDB calls | read units |", "|---|--:|---|--:|"]
    lines += [
        f"| {r.read} | {r.items:,} | {format_calls(r.units.calls)} | {_units(r.units.read)} |"
        for r in run.reads
    ]
    return lines


def run_markdown(run: CloseRun) -> list[str]:
    """One board's section."""
    parts = _partitions(run.partitions)
    writing = next((s for s in run.steps if s.step == "writing results"), None)
    reported = f"{_units(writing.units.write + writing.units.index_write)}" if writing else "—"
    results = next(k for k in run.storage.kinds if k.kind == RESULT.name)
    return [
        f"## {run.entrants:,} entrants, {parts}",
        "",
        f"Loaded in {run.load_seconds:,.0f} s ({run.loaded_items:,} items); closed in"
        f" {run.close_seconds:,.1f} s, **{run.entrants_per_second:,.0f} entrants a second**,"
        f" {_units((run.units.write + run.units.index_write) / run.entrants)} write units and"
        f" {_units(run.units.read / run.entrants)} read units per entrant (the machine's load"
        f" average {run.load_average[0]:.1f} as the close began, {run.load_average[1]:.1f} as"
        " it ended).",
        "",
        *_steps_table(run),
        "",
        f"Writing the {results.items:,} Result items once costs"
        f" {_units(run.storage.result_write_units)} write units by DynamoDB's rules (their sizes,"
        f" in the table and both indexes); the step that writes them reported {reported}, its"
        " cursor's moves on the board's item included.",
        "",
        *_storage_table(run),
        "",
        *_reads_table(run),
    ]


def markdown(
    machine: Mapping[str, Any], settings: Mapping[str, Any], runs: Sequence[CloseRun]
) -> str:
    """The report: the machine, what was measured, and a section per board."""
    lines = [
        "# Season close: a board's final standings, frozen and written",
        "",
        *machine_lines(machine),
        f"- One board per size ({', '.join(f'{n:,}' for n in settings['entries'])} entrants"
        f" on {_partitions(settings['partitions'])}), each on a fresh DynamoDB Local, loaded with"
        " BatchWriteItem as first plays leave it (player, e-mail claim, session, entry guard,"
        " Score item), scores from 0 to a third of the entrants (many ties); its end an hour"
        " before the close",
        "- The close is the dynamo layer's own `close_board` (what `leaderboard close-periods`"
        f" runs) on a client of its own: at most 16 writes in flight, {RESULT_PAGE} entrants"
        " between two moves of its cursor; each step timed from the moment the board's item"
        " first reads in it",
        "- Units as DynamoDB Local reports them (`ReturnConsumedCapacity=INDEXES` on every call):"
        " read units, the table's write units and the indexes' apart; a conditional write whose"
        " condition failed reports none (on AWS it consumes the units of the item it checked)",
        "- Storage by DynamoDB's rules (`bench/core/sizes.py`): attribute names and values, and"
        f" billed with {ITEM_OVERHEAD_BYTES} bytes of overhead per item, in the table and again in"
        f" each index holding it; reads of {PAGE} entries as the service reads a page",
        "",
    ]
    for run in runs:
        lines += [*run_markdown(run), ""]
    return "\n".join(lines)


def write_results(
    out: Path,
    runs: Sequence[CloseRun],
    *,
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    seconds: float,
) -> str:
    """Write ``season_close.json`` and ``season_close.md`` into ``out``; the Markdown."""
    text = markdown(machine, settings, runs)
    document = run_document(
        machine=machine, settings=settings, key="runs", parts=runs, total_seconds=seconds
    )
    save_results(out, "season_close", document, text)
    return text
