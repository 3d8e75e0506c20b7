"""The capacity report: units per operation, the ranks at each size, the mix and its cost, the
storage, the hot boards' ceilings, and the write-sharded boards' figures
(:mod:`bench.capacity.sharded_report`), as Markdown and as a JSON document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.capacity.cost import PRICES, PRICES_AS_OF, mix_cost, storage_cost
from bench.capacity.hot import PARTITION_RCU, PARTITION_WCU, HotResult
from bench.capacity.probe import Measured
from bench.capacity.run import Results
from bench.capacity.sharded_report import sharded_document, sharded_markdown
from bench.core.report import machine_lines, save_results
from bench.core.sizes import ITEM_OVERHEAD_BYTES

__all__ = ["document", "markdown", "write_results"]


def _n(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"


def _calls(calls: Mapping[str, float]) -> str:
    return " + ".join(f"{_n(n)} {name}" if n != 1 else name for name, n in calls.items()) or "none"


def _units_table(rows: Sequence[Measured]) -> list[str]:
    lines = [
        "| operation | DynamoDB calls | read units | write units (table) | write units (indexes)"
        " | of which on the board's partition | DynamoDB Local reported |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for m in rows:
        r = m.per_request()
        lines.append(
            f"| {m.name} | {_calls(r['calls'])} | {_n(r['read_units'])} | {_n(r['write_units'])}"
            f" | {_n(r['index_write_units'])} | {_n(r['board_partition_write_units'])}"
            f" | {_n(r['reported_units'])} |"
        )
    return lines


def _hot_table(hot: Sequence[HotResult]) -> list[str]:
    lines = [
        "| operator | plays/s offered | plays | board partition WCU/s (mean, peak second)"
        " | hottest partition | WCU per play on the board's partition (by item)"
        f" | plays/s before {PARTITION_WCU:,.0f} WCU/s |",
        "|---|--:|--:|--:|---|--:|--:|",
    ]
    for h in hot:
        parts = " + ".join(f"{_n(v)} {k}" for k, v in h.board_wcu_per_play_by_item.items())
        lines.append(
            f"| {h.operator} | {_n(h.offered_per_second)} | {h.plays} |"
            f" {_n(h.board_wcu_per_second)}, {_n(h.board_wcu_peak_second)} |"
            f" `{h.hottest_partition}` | {_n(h.board_wcu_per_play)} ({parts}) |"
            f" {h.ceiling_plays_per_second:,.0f} |"
        )
    return lines


def _mix_cost(results: Results) -> dict[str, Any]:
    if results.mix is None:
        return {}
    per = results.mix.per_request()
    return mix_cost(per["read_units"], per["write_units"] + per["index_write_units"])


def _storage(results: Results) -> dict[str, Any]:
    if not results.storage:
        return {}
    per_player = results.storage["bytes"] / results.storage["players"]
    return {
        **results.storage,
        "bytes_per_player": round(per_player, 1),
        "dollars_per_million_players_month": round(storage_cost(per_player), 4),
    }


def document(
    results: Results, *, machine: Mapping[str, Any], settings: Mapping[str, Any], seconds: float
) -> dict[str, Any]:
    """Every number of the run."""
    return {
        "machine": machine,
        "settings": settings,
        "prices": {"region": "us-east-1", "as_of": PRICES_AS_OF, **PRICES},
        "operations": [m.per_request() for m in results.operations],
        "ranks": [m.per_request() for m in results.ranks],
        "mix": results.mix.per_request() if results.mix else None,
        "mix_kinds": [m.per_request() for m in results.mix_kinds],
        "mix_cost_per_million_requests": _mix_cost(results),
        "storage": _storage(results),
        "hot_boards": [h.document() for h in results.hot],
        "write_sharded_boards": sharded_document(
            results.sharded, results.top_pages, results.balance, rate=results.rate
        ),
        "partition_limits": {"wcu_per_second": PARTITION_WCU, "rcu_per_second": PARTITION_RCU},
        "load_seconds": {str(k): round(v, 1) for k, v in results.loads.items()},
        "total_seconds": round(seconds, 1),
    }


def markdown(
    results: Results, *, machine: Mapping[str, Any], settings: Mapping[str, Any], seconds: float
) -> str:
    """The report as Markdown."""
    lines = ["# Capacity and cost", ""]
    lines += machine_lines(machine)
    lines += [
        f"- Settings: {', '.join(f'{k} {v}' for k, v in settings.items())}",
        "- Units computed with DynamoDB's rules from every item each request read or wrote"
        " (images read before and after each write); DynamoDB Local's own"
        " `ReturnConsumedCapacity` beside them",
        "",
        "## Units per operation (the response cache off; plays with ranks from the rank index)",
        "",
    ]
    lines += _units_table(results.operations)
    lines += ["", "## A player's rank on the main board (the middle entry)", ""]
    lines += _units_table(results.ranks)
    if results.mix is not None:
        cost = _mix_cost(results)
        per = results.mix.per_request()
        lines += ["", f"## The mix ({results.mix.requests} requests, ranks from the index)", ""]
        lines += _units_table([results.mix, *results.mix_kinds])
        lines += [
            "",
            f"Cost per million requests of the mix (us-east-1, prices of {PRICES_AS_OF}):"
            f" {_n(per['read_units'])} read units and"
            f" {_n(per['write_units'] + per['index_write_units'])} write units a request;"
            f" on demand ${cost['on_demand']['read']:.2f} reads +"
            f" ${cost['on_demand']['write']:.2f} writes ="
            f" **${cost['on_demand']['total']:.2f}**; provisioned at"
            f" {cost['provisioned']['utilisation']:.0%} utilisation"
            f" ${cost['provisioned']['total']:.2f}.",
        ]
    storage = _storage(results)
    if storage:
        lines += [
            "",
            f"Storage: {storage['items']:,} items for {storage['players']:,} players,"
            f" {storage['bytes_per_player']:,.0f} bytes a player with the index copies and"
            f" {ITEM_OVERHEAD_BYTES} bytes of overhead per item and copy:"
            f" ${storage['dollars_per_million_players_month']:.2f} a month per million players.",
        ]
    if results.hot:
        lines += ["", "## One hot board", ""]
        lines += _hot_table(results.hot)
    sharded = sharded_markdown(
        results.sharded, results.top_pages, results.balance, rate=results.rate
    )
    if sharded:
        lines += ["", *sharded]
    lines += ["", f"Run time: {seconds:.0f} s."]
    return "\n".join(lines)


def write_results(
    out: Path,
    results: Results,
    *,
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    seconds: float,
) -> str:
    """Write ``capacity.json`` and ``capacity.md`` into ``out``; the Markdown."""
    text = markdown(results, machine=machine, settings=settings, seconds=seconds)
    save_results(
        out,
        "capacity",
        document(results, machine=machine, settings=settings, seconds=seconds),
        text,
    )
    return text
