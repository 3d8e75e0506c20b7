"""The rank index benchmark's report: the Markdown tables (rank latency, contract, stream lag,
set-up, the verdict against the targets) and the files written to the output folder
(``rank_index.json`` and ``rank_index.md``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.core.report import machine_lines, run_document, save_results
from bench.rank_index.lag import POLL_SECONDS
from bench.rank_index.measure import NAMED_RANK_QUERY, RANK_QUERY
from bench.rank_index.results import Options, RankLatency, SizeResult
from rankindex.index import MAX_LAG_MS

__all__ = ["INDEX_FORMAT", "P50_TARGET_MS", "before_of", "report", "write_results"]

INDEX_FORMAT = 2
"""The index's format this run measured (rankindex/keys.py): recorded in ``rank_index.json``
so that a later run knows which numbers are of the earlier one."""
P50_TARGET_MS = 2.0


def _calls(latency: RankLatency, shown: int = 3) -> str:
    """The most common call patterns with how often, and the mean number of calls."""
    patterns = list(latency.calls.items())
    text = ", ".join(f"{pattern} ({n})" for pattern, n in patterns[:shown])
    if len(patterns) > shown:
        text += f", {len(patterns) - shown} more patterns"
    return f"{text}; mean {latency.calls_per_request:.1f} calls"


def report(
    machine: Mapping[str, Any],
    options: Options,
    results: Sequence[SizeResult],
    total_seconds: float,
    before: Mapping[str, Any] | None = None,
) -> str:
    """The whole report in Markdown."""
    lines = [
        "# Rank index: rank through GraphQL from the Redis index and from the table's COUNT",
        "",
        *machine_lines(machine),
        f"- Redis {machine['redis']} (EmbeddedRedis, in memory), on the same machine; one"
        " process serves both app instances, runs the projector and drives the requests, on"
        f" {machine.get('loop', 'asyncio')}'s event loop (as `leaderboard serve` runs)",
        f"- Query: `{RANK_QUERY % 'bench'}` over HTTP on loopback, one request at a time,"
        f" random probe players: {options.requests} measured requests to the index instance"
        f" after {options.warmup} unrecorded ones (each size starts a fresh, cold DynamoDB"
        f" Local), {options.count_requests} to the COUNT instance after"
        f" {options.count_warmup}; scores uniform in 0..N/10 (many ties)",
        f"- index + name: `{NAMED_RANK_QUERY % 'bench'}` to the index instance, as many"
        " requests: asking anything else of the player reads it",
        f"- Targets: exact rank at 10,000,000 entries with p50 under {P50_TARGET_MS:g} ms through"
        " GraphQL;"
        f" stream lag p99 under 1 s (the index answers only while its projector caught up"
        f" within {MAX_LAG_MS:,} ms)",
        "",
        "## Rank latency",
        "",
        "| entries | source | p50 ms | p95 ms | p99 ms | exact | DynamoDB calls / request"
        " | raw p50 / p99 ms | ZCOUNT server µs |",
        "|--:|---|--:|--:|--:|--:|---|--:|--:|",
    ]
    for r in results:
        for lat in r.latencies:
            extra = (
                f"{lat.raw_p50_ms:.2f} / {lat.raw_p99_ms:.2f} | {lat.zcount_server_us:.1f}"
                if lat.source == "index"
                else "- | -"
            )
            lines.append(
                f"| {r.entries:,} | {lat.source} | {lat.p50_ms:.2f} | {lat.p95_ms:.2f} |"
                f" {lat.p99_ms:.2f} | {lat.exact}/{lat.requests}"
                f"{f' ({lat.failed} failed)' if lat.failed else ''} | {_calls(lat)} | {extra} |"
            )
        if r.count_skipped:
            lines.append(f"| {r.entries:,} | COUNT | - | - | - | - | {r.count_skipped} | - | - |")
    lines += [
        "",
        "exact: answers equal to the rank computed from the generated scores (rank, total and"
        " percentile). DynamoDB calls: none when the index ranks the entry, which also proves"
        " the player exists, so the player is not read. Raw: the calls the service makes for"
        " the query, `RankIndex.ranks` (the heartbeat and one script reading state, layout,"
        " the player's bucket, ZSCORE, ZCOUNT and ZCARD, in one round trip), sent from the"
        " benchmark's process without HTTP and GraphQL, alternating with the requests on the"
        " same probes. ZCOUNT server µs: the Redis server's mean time per ZCOUNT over the"
        " measured phase (`INFO commandstats`).",
        "",
        "## Contract: the same probes asked of both instances",
        "",
        "Each probe measured against the COUNT instance is asked of the index instance too.",
        "",
        "| entries | probes | index = COUNT | both = expected |",
        "|--:|--:|--:|--:|",
    ]
    for r in results:
        if r.contract is None:
            lines.append(f"| {r.entries:,} | - | - | - (no COUNT: {r.count_skipped}) |")
        else:
            c = r.contract
            lines.append(f"| {r.entries:,} | {c.sample} | {c.same} | {c.exact} |")
    lines += [
        "",
        "## Stream lag: submitScore response to the entry in the index",
        "",
        "| entries | submissions | p50 ms | p95 ms | p99 ms | max ms | timed out"
        " | score in index | submitScore p50 ms |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        if r.lag is None:
            continue
        g = r.lag
        lines.append(
            f"| {r.entries:,} | {g.submissions} | {g.p50_ms:.1f} | {g.p95_ms:.1f} |"
            f" {g.p99_ms:.1f} | {g.max_ms:.1f} | {g.timed_out} | {g.score_checked} |"
            f" {g.submit_p50_ms:.1f} |"
        )
    lines += [
        "",
        "Each mutation improves a probe's entry; the lag runs from its response until the"
        " index's record of the player holds the entry's new version (polled every"
        f" {POLL_SECONDS * 1000:.0f} ms); the projector polls the stream every 100 ms.",
        "",
        "## Set-up",
        "",
        "| entries | table | table s | items | index | index s | in sync after s"
        " | Redis used_memory MB | verify | size total s | load avg start / end |",
        "|--:|---|--:|--:|---|--:|--:|--:|---|--:|--:|",
    ]
    for r in results:
        lines.append(
            f"| {r.entries:,} | {r.load_method} | {r.load_seconds:.1f} | {r.table_items:,} |"
            f" {r.index_method} | {r.index_seconds:.1f} | {r.sync_seconds:.1f} |"
            f" {r.redis_used_memory / 2**20:.0f} | {r.verified} | {r.total_seconds:.1f} |"
            f" {r.load_average[0]:.1f} / {r.load_average[1]:.1f} |"
        )
    lines += _before_lines(results, before or {})
    lines += ["", *_verdict(results), "", f"Total run time: {total_seconds:.1f} s."]
    return "\n".join(lines)


def _before_lines(results: Sequence[SizeResult], before: Mapping[str, Any]) -> list[str]:
    """The index's rank latency and Redis's memory next to the run of the index's earlier
    format (``before``: its numbers by board size)."""
    if not before:
        return []
    lines = [
        "",
        "## Before and after: the index's earlier format (sorted set of text members and one"
        " version hash) and this one",
        "",
        f"Before: {before.get('source', 'the previous run')}.",
        "",
        "| entries | index p50 ms before / after | index p99 ms before / after"
        " | raw p50 ms before / after | Redis used_memory B/entry before / after |",
        "|--:|--:|--:|--:|--:|",
    ]
    sizes: Mapping[str, Any] = before.get("sizes", {})
    for r in results:
        old = sizes.get(str(r.entries))
        index = next((lat for lat in r.latencies if lat.source == "index"), None)
        if index is None:
            continue
        per_entry = r.redis_used_memory / r.entries

        def pair(key: str, now: float, digits: int = 2, old: Any = old) -> str:
            was = f"{old[key]:.{digits}f}" if old else "-"
            return f"{was} / {now:.{digits}f}"

        lines.append(
            f"| {r.entries:,} | {pair('p50_ms', index.p50_ms)} | {pair('p99_ms', index.p99_ms)}"
            f" | {pair('raw_p50_ms', index.raw_p50_ms)}"
            f" | {pair('used_memory_per_entry', per_entry, 0)} |"
        )
    return lines


def before_of(previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """The numbers of the earlier format from a previous ``rank_index.json``: its own when it
    ran that format, else the ones it carried."""
    if not previous:
        return {}
    if previous.get("format") == INDEX_FORMAT:
        carried: dict[str, Any] = previous.get("before", {})
        return carried
    sizes: dict[str, Any] = {}
    for size in previous.get("sizes", []):
        index = next((lat for lat in size["latencies"] if lat["source"] == "index"), None)
        if index is None:
            continue
        sizes[str(size["entries"])] = {
            "p50_ms": index["p50_ms"],
            "p99_ms": index["p99_ms"],
            "raw_p50_ms": index["raw_p50_ms"],
            "used_memory_per_entry": size["redis_used_memory"] / size["entries"],
        }
    machine = previous.get("machine", {})
    return {
        "source": f"the run of the earlier format on the same kind of machine"
        f" (Redis {machine.get('redis', '?')}, {previous.get('total_seconds', 0):.0f} s)",
        "sizes": sizes,
    }


def _verdict(results: Sequence[SizeResult]) -> list[str]:
    lines = ["## Against the targets", ""]
    largest = max(results, key=lambda r: r.entries)
    index = next((lat for lat in largest.latencies if lat.source == "index"), None)
    if index is not None:
        met = index.p50_ms < P50_TARGET_MS and index.exact == index.requests
        lines.append(
            f"- Rank at {largest.entries:,} entries through GraphQL: p50 {index.p50_ms:.2f} ms,"
            f" {index.exact}/{index.requests} exact: {'met' if met else 'NOT met'}"
            f" (target: exact, p50 under {P50_TARGET_MS:g} ms at 10,000,000 entries)"
        )
    lags = [r.lag for r in results if r.lag is not None]
    if lags:
        worst = max(g.p99_ms for g in lags)
        met = worst < 1000 and not any(g.timed_out for g in lags)
        lines.append(
            f"- Stream lag p99, worst over the sizes: {worst:.1f} ms:"
            f" {'met' if met else 'NOT met'} (target: under 1 s)"
        )
    return lines


def write_results(
    out: Path,
    *,
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    results: Sequence[SizeResult],
    total_seconds: float,
    markdown: str,
    before: Mapping[str, Any] | None = None,
) -> None:
    """``rank_index.json`` (every number, with the index's format and the earlier format's
    numbers it was compared with) and ``rank_index.md`` (the printed report)."""
    document = run_document(
        machine=machine,
        settings=settings,
        key="sizes",
        parts=results,
        total_seconds=total_seconds,
    )
    document["format"] = INDEX_FORMAT
    if before:
        document["before"] = dict(before)
    save_results(out, "rank_index", document, markdown)
