"""The moderation benchmark's results: each size's trials summed up (median, min and max
time, the calls and items of one call), and the Markdown report."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.core.measure import format_calls
from bench.core.report import machine_lines
from bench.moderation.data import ERASURE_BOARDS, PLAY_RECORDS
from bench.moderation.measure import Trial

__all__ = ["BAN", "ERASURE", "SizeResult", "markdown", "summarise"]

BAN = "ban"
ERASURE = "erasure"


@dataclass(frozen=True)
class SizeResult:
    """One operation at one size, over every trial."""

    operation: str
    """:data:`BAN` (size: the player's boards) or :data:`ERASURE` (size: its sessions)."""
    size: int
    median_ms: float
    min_ms: float
    max_ms: float
    calls: dict[str, int]
    """The DynamoDB calls of the first trial, by operation."""
    calls_vary: bool
    """Whether the trials made different calls."""
    call_ms: dict[str, float]
    """Milliseconds waiting for each operation's calls in the median trial (the slower of
    the two middle ones, for an even number)."""
    written: int
    """Items written (put, updated or deleted) by the first trial."""
    deleted: int
    """Items deleted by the first trial."""
    items_per_second: float
    """Items deleted per second at the median time."""
    trials: list[Trial]


def summarise(operation: str, size: int, trials: Sequence[Trial]) -> SizeResult:
    """The result of ``trials`` (at least one) of ``operation`` at ``size``."""
    if not trials:
        raise ValueError("no trials")
    times = [t.ms for t in trials]
    median = statistics.median(times)
    first = trials[0]
    middle = sorted(trials, key=lambda t: t.ms)[len(trials) // 2]
    deleted = first.written["delete"]
    return SizeResult(
        operation=operation,
        size=size,
        median_ms=round(median, 1),
        min_ms=min(times),
        max_ms=max(times),
        calls=first.calls,
        calls_vary=any(t.calls != first.calls or t.written != first.written for t in trials),
        call_ms=middle.call_ms,
        written=sum(first.written.values()),
        deleted=deleted,
        items_per_second=round(deleted / (median / 1000), 1) if median > 0 else 0.0,
        trials=list(trials),
    )


def _calls(result: SizeResult) -> str:
    total = sum(result.calls.values())
    mark = " (varies)" if result.calls_vary else ""
    return f"{total}: {format_calls(result.calls)}{mark}"


def _waits(result: SizeResult) -> str:
    slowest = sorted(result.call_ms.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{name} {ms:,.0f}" for name, ms in slowest) or "none"


def _time(result: SizeResult) -> str:
    return f"{result.median_ms:,.0f} ({result.min_ms:,.0f}-{result.max_ms:,.0f})"


def ban_table_markdown(results: Sequence[SizeResult]) -> str:
    """The bans' table: one row per number of boards."""
    lines = [
        "| ban: player's boards | ms, median (min-max) | DynamoDB calls | ms waiting for them |"
        " items written |",
        "|--:|--:|---|---|--:|",
    ]
    lines += [
        f"| {r.size:,} | {_time(r)} | {_calls(r)} | {_waits(r)} | {r.written:,} |"
        for r in results
        if r.operation == BAN
    ]
    return "\n".join(lines)


def erasure_table_markdown(results: Sequence[SizeResult]) -> str:
    """The erasures' table: one row per number of sessions."""
    lines = [
        "| erasure: player's sessions | ms, median (min-max) | DynamoDB calls |"
        " ms waiting for them | items deleted | items/s |",
        "|--:|--:|---|---|--:|--:|",
    ]
    lines += [
        f"| {r.size:,} | {_time(r)} | {_calls(r)} | {_waits(r)} | {r.deleted:,} |"
        f" {r.items_per_second:,.0f} |"
        for r in results
        if r.operation == ERASURE
    ]
    return "\n".join(lines)


def markdown(
    machine: Mapping[str, Any], settings: Mapping[str, Any], results: Sequence[SizeResult]
) -> str:
    """The report: the machine, what was measured, and a table per operation."""
    return "\n".join(
        [
            "# Moderation: bans and erasures, timed and counted",
            "",
            *machine_lines(machine),
            f"- {settings['repeat']} timed runs per size, each on a fresh DynamoDB Local after an"
            " untimed smaller run; the dynamo layer's own ban_player and erase_player, no HTTP",
            "- Ban: the player has one entry on each board, a second player another;"
            " afterwards no Score item of the banned player remains",
            f"- Erasure: the player's sessions are spread over {ERASURE_BOARDS} boards with its"
            f" entry on each, {PLAY_RECORDS} play records; afterwards a Scan finds its id in"
            " no item",
            "- Calls and items are those of the first run (the same in every run unless marked);"
            " the time waiting for each operation's calls is the median run's",
            "",
            ban_table_markdown(results),
            "",
            erasure_table_markdown(results),
        ]
    )
