"""The rank index memory benchmark's report in Markdown: what the board takes in Redis and the
latency of one call."""

from __future__ import annotations

from typing import Any

from bench.rank_index_memory.measure import META_KEY, WARMUP_CALLS, ZSET_KEY, Latency, Memory

__all__ = ["markdown"]


def markdown(
    machine: dict[str, Any],
    entries: int,
    load_seconds: float,
    memory: Memory,
    latency: list[Latency],
) -> str:
    """The report: the machine, the memory of both keys and of the server, and each command's
    latency from each client."""
    mib = 1 << 20
    used_delta = memory.used_memory_after - memory.used_memory_before
    lines = [
        f"# Rank index in Redis: one board of {entries:,} entries",
        "",
        f"- Machine: {machine['cpu_count']} cores ({machine['platform']}),"
        f" Python {machine['python']}, redis-py {machine['redis_py']}",
        f"- redis-server {machine['redis_server']} ({machine['allocator']}), in memory,"
        " on the same machine over loopback",
        f"- Loaded in {load_seconds:.1f} s",
        "",
        "| what | bytes | MiB | bytes per entry |",
        "|---|--:|--:|--:|",
        f"| `MEMORY USAGE {ZSET_KEY}` ({memory.zset_encoding}) | {memory.zset_bytes:,} |"
        f" {memory.zset_bytes / mib:.1f} | {memory.zset_bytes_per_entry:.1f} |",
        f"| `MEMORY USAGE {META_KEY}` ({memory.hash_encoding}) | {memory.hash_bytes:,} |"
        f" {memory.hash_bytes / mib:.1f} | {memory.hash_bytes_per_entry:.1f} |",
        f"| both keys | {memory.zset_bytes + memory.hash_bytes:,} |"
        f" {(memory.zset_bytes + memory.hash_bytes) / mib:.1f} |"
        f" {(memory.zset_bytes + memory.hash_bytes) / entries:.1f} |",
        f"| `used_memory` before | {memory.used_memory_before:,} |"
        f" {memory.used_memory_before / mib:.1f} | |",
        f"| `used_memory` after | {memory.used_memory_after:,} |"
        f" {memory.used_memory_after / mib:.1f} | |",
        f"| `used_memory` after - before | {used_delta:,} | {used_delta / mib:.1f} |"
        f" {memory.used_memory_per_entry:.1f} |",
        f"| `used_memory_rss` after | {memory.used_memory_rss_after:,} |"
        f" {memory.used_memory_rss_after / mib:.1f} | |",
        "",
        f"Latency of one call, measured from Python ({latency[0].calls:,} random calls each,"
        f" after {WARMUP_CALLS} warm-up); server = `usec_per_call` of `INFO commandstats`:",
        "",
        "| command | client | p50 µs | p99 µs | mean µs | server µs |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for r in latency:
        lines.append(
            f"| {r.command} | {r.client} | {r.p50_us:.1f} | {r.p99_us:.1f} | {r.mean_us:.1f} |"
            f" {r.server_us_per_call:.2f} |"
        )
    return "\n".join(lines)
