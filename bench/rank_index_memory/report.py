"""The rank index memory benchmark's report in Markdown: what a board takes in Redis in each
format, side by side, and the latency of one call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.rank_index_memory.measure import WARMUP_CALLS

__all__ = ["markdown"]

_TARGET = 120
"""Bytes per entry the index may take, everything included."""

_ROWS = (
    ("sorted set (`MEMORY USAGE`)", "zset_bytes_per_entry"),
    ("per-player state (`MEMORY USAGE`)", "state_bytes_per_entry"),
    ("every key of the board (`MEMORY USAGE`)", "keys_bytes_per_entry"),
    ("`used_memory` after - before", "used_memory_per_entry"),
)


def _used(memory: Mapping[str, Any]) -> int:
    return int(memory["used_memory_after"]) - int(memory["used_memory_before"])


def _state(name: str, memory: Mapping[str, Any]) -> str:
    encodings = ", ".join(f"{n:,} {e}" for e, n in sorted(memory["state_encodings"].items()))
    what = "one hash" if name == "before" else f"{memory['state_keys']:,} buckets"
    return f"{what} ({encodings})"


def _size_lines(size: Mapping[str, Any]) -> list[str]:
    entries = size["entries"]
    formats: Mapping[str, Any] = size["formats"]
    names = list(formats)
    lines = [
        f"## {entries:,} entries",
        "",
        "Bytes per entry:",
        "",
        "| what | " + " | ".join(names) + " |",
        "|---|" + "--:|" * len(names),
    ]
    for label, field in _ROWS:
        cells = " | ".join(f"{formats[n]['memory'][field]:.1f}" for n in names)
        lines.append(f"| {label} | {cells} |")
    mib = 1 << 20
    cells = " | ".join(f"{_used(formats[n]['memory']) / mib:,.1f}" for n in names)
    lines.append(f"| `used_memory` after - before, MiB | {cells} |")
    cells = " | ".join(f"{formats[n]['memory']['zset_encoding']}" for n in names)
    lines.append(f"| sorted set's encoding | {cells} |")
    cells = " | ".join(_state(n, formats[n]["memory"]) for n in names)
    lines.append(f"| per-player state | {cells} |")
    cells = " | ".join(
        f"{formats[n]['load_seconds']:.1f} / {formats[n].get('settle_seconds', 0):.1f}"
        for n in names
    )
    lines.append(f"| load s / settle s (tables done growing) | {cells} |")
    lines += [
        "",
        "Latency of one call from Python; server = `usec_per_call` of `INFO commandstats`:",
        "",
        "| command | client | " + " | ".join(f"{n} p50 / p99 µs (server)" for n in names) + " |",
        "|---|---|" + "--:|" * len(names),
    ]
    first = formats[names[0]]["latency"]
    for i, row in enumerate(first):
        cells = " | ".join(
            f"{formats[n]['latency'][i]['p50_us']:.1f} / {formats[n]['latency'][i]['p99_us']:.1f}"
            f" ({formats[n]['latency'][i]['server_us_per_call']:.2f})"
            for n in names
        )
        lines.append(f"| {row['command']} | {row['client']} | {cells} |")
    lines.append("")
    return lines


def _verdict(sizes: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = ["## Against the target", ""]
    for size in sizes:
        after = size["formats"].get("after")
        if after is None:
            continue
        memory = after["memory"]
        used, keys = memory["used_memory_per_entry"], memory["keys_bytes_per_entry"]
        lines.append(
            f"- {size['entries']:,} entries: {keys:.1f} B/entry by `MEMORY USAGE` of the board's"
            f" keys ({'met' if keys <= _TARGET else 'NOT met'}), {used:.1f} B/entry of"
            f" `used_memory` ({'met' if used <= _TARGET else 'NOT met'}); target: at most"
            f" {_TARGET} B/entry (120 MB per million entries)"
        )
    return lines


def markdown(
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    sizes: Sequence[Mapping[str, Any]],
    total_seconds: float,
) -> str:
    """The report: the machine, then for each size the memory of each format side by side and
    each command's latency, then the verdict against the target."""
    calls = settings["calls"]
    lines = [
        "# Rank index in Redis: one board, in the format before and after",
        "",
        f"- Machine: {machine.get('cpu_count')} cores ({machine.get('platform')}),"
        f" Python {machine.get('python')}, redis-py {machine.get('redis_py')}",
        f"- redis-server {machine.get('redis_server')} ({machine.get('allocator')}), in memory,"
        " a fresh server for each size and format, over loopback",
        "- before: member `<13-digit tie value>#<player id>` (22 bytes here), and one hash of"
        " player id -> `<version>|<member>`",
        "- after: member = the tie value in 6 bytes + the player id (14 bytes here), and the"
        f" player records (6-byte tie + version) in listpack buckets of about"
        f" {settings['bucket_fill']} (rankindex/players.py)",
        "- Measured once the big keys' hash tables have finished growing (Redis moves a table"
        " to its doubled one a bucket per operation on the key: the benchmark makes that many"
        " lookups, as a board taking plays soon does)",
        f"- Player ids `p0000000`...; rank values uniform in 0..{settings['rank_value_limit']:,};"
        f" {calls:,} timed calls per command after {WARMUP_CALLS} warm-up",
        "",
    ]
    for size in sizes:
        lines += _size_lines(size)
    lines += _verdict(sizes)
    lines += ["", f"Total run time: {total_seconds:.1f} s."]
    return "\n".join(lines)
