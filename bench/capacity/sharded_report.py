"""The capacity report's write-sharded boards: what each play writes to each partition key of a
board of N partitions, the figures at the plan's rate of plays (:mod:`bench.capacity.ceiling`),
the N a peak calls for, the verdict against the target, and the uncached top-100 page on each
N, as Markdown and as a JSON document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.capacity.ceiling import (
    HOLD_SECONDS,
    ITEM_TRANSACTIONS,
    TARGET_ITEM_TRANSACTIONS,
    TARGET_PARTITIONS,
    Balance,
    Figures,
    choosing_partitions,
    figures,
    lowest,
    target_verdict,
)
from bench.capacity.hot import PARTITION_WCU, SCORE_RANGE
from bench.capacity.sharded import FIRST_ENTRIES, PHASES, STEADY, PhaseRun
from bench.capacity.top_pages import PageCost
from dynamo.leaderboards import COUNT_SHARDS, LEADERBOARD

__all__ = ["sharded_document", "sharded_markdown"]


def _n(value: float | None, digits: int = 2) -> str:
    """``value`` with thousands separators and up to ``digits`` decimals ("-" for None)."""
    if value is None:
        return "-"
    if value % 1 == 0 or digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}".rstrip("0").rstrip(".")


def _bound(value: float | None) -> str:
    return "none" if value is None else f"{value:,.0f}"


def _figured(
    runs: Sequence[PhaseRun], rate: float, balance: Balance
) -> list[tuple[PhaseRun, Figures]]:
    return [(run, figures(run, rate, balance)) for run in runs]


def _by_item(run: PhaseRun, total: float, by_item: dict[str, float]) -> str:
    parts = ", ".join(f"{k} {_n(run.per_play(v))}" for k, v in by_item.items() if v)
    return f"{_n(run.per_play(total))} ({parts})" if parts else _n(run.per_play(total))


def _hottest(f: Figures) -> str:
    if f.hottest_share == 0:
        return "none"
    return (
        f"{f.hottest_item}: 1 play in {1 / f.hottest_share:,.1f},"
        f" {f.hottest_transactions:,.0f} tx/s"
    )


def _phase_table(rows: Sequence[tuple[PhaseRun, Figures]], rate: float) -> list[str]:
    lines = [
        "| operator | N | entries changed | WCU a play: board's key (by item) | Score keys"
        " (by item; keys written) | player's keys | at"
        f" {rate:,.0f} plays/s: board's key, busiest Score key (WCU/s) | plays/s before"
        f" {PARTITION_WCU:,.0f} WCU/s | hottest item at {rate:,.0f} plays/s | plays/s before"
        f" {ITEM_TRANSACTIONS:,.0f} tx/s | ceiling (plays/s) |",
        "|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|",
    ]
    for run, f in rows:
        lines.append(
            f"| {run.operator} | {run.partitions} | {run.changed} of {run.plays} |"
            f" {_by_item(run, run.board_key_wcu, run.board_key_wcu_by_item)} |"
            f" {_by_item(run, run.score_keys_wcu, run.score_keys_wcu_by_item)};"
            f" {run.score_keys_written} |"
            f" {_n(run.per_play(run.player_wcu))} |"
            f" {_n(f.board_key_wcu, 0)}, {_n(f.score_key_wcu, 0)} |"
            f" {_bound(f.partition_bound)} | {_hottest(f)} | {_bound(f.conflict_bound)} |"
            f" {_bound(f.ceiling)} |"
        )
    return lines


def sharded_document(
    runs: Sequence[PhaseRun],
    pages: Sequence[PageCost],
    balance: Balance | None,
    *,
    rate: float,
) -> dict[str, Any]:
    """The write-sharded boards' numbers, for the JSON report."""
    if balance is None or not runs:
        return {}
    rows = _figured(runs, rate, balance)
    return {
        "plays_per_second": rate,
        "partition_wcu": PARTITION_WCU,
        "hold_seconds": HOLD_SECONDS,
        "item_transactions": ITEM_TRANSACTIONS,
        "balance": balance.document(),
        "phases": [{**run.document(), "figures": f.document()} for run, f in rows],
        "choosing_partitions": choosing_partitions(rows),
        "target": target_verdict(rows, rate),
        "top_100_by_partitions": [p.document() for p in pages],
    }


def _target_lines(rows: Sequence[tuple[PhaseRun, Figures]], rate: float) -> list[str]:
    target = target_verdict(rows, rate)
    head = (
        f"Target: one board of N = {TARGET_PARTITIONS} takes {rate:,.0f} plays/s of each"
        f" operator within {PARTITION_WCU:,.0f} WCU/s per partition key, no item in more than"
        f" {TARGET_ITEM_TRANSACTIONS:,.0f} transactions a second."
    )
    if not target["measured"]:
        return [head, "", f"Not measured: no board of {TARGET_PARTITIONS} partitions in this run."]
    lines = [
        head,
        "",
        "| operator | phase | busiest key of the board (WCU/s) | hottest item (tx/s) | within |",
        "|---|---|--:|--:|---|",
    ]
    for case in target["cases"]:
        lines.append(
            f"| {case['operator']} | {case['phase']} |"
            f" {_n(case['busiest_key_wcu_per_second'], 0)} |"
            f" {_n(case['hottest_item_transactions_per_second'], 0)} |"
            f" {'yes' if case['within_target'] else '**no**'} |"
        )
    fewest = ", ".join(
        f"{op} {'N = ' + str(n) if n is not None else 'no N measured'}"
        for op, n in target["fewest_partitions_in_steady_play"].items()
    )
    bursts = [
        f for run, f in rows if run.partitions == TARGET_PARTITIONS and run.phase == FIRST_ENTRIES
    ]
    key_wcu = max(f.busiest_wcu for f in bursts)
    key_bound = lowest([f.partition_bound for f in bursts])
    shard = max(bursts, key=lambda f: f.hottest_transactions)
    lines += [
        "",
        f"**{'Met' if target['met'] else 'Not met'}.** Steady play (every player entered)"
        " holds no item another player's play holds, and writes the board only at its"
        f" players' Score items; the fewest partitions within the bounds at {rate:,.0f}"
        f" plays/s: {fewest}."
        " A first entry writes its player's count shard beside its Score item, under its"
        f" player's Score key: on N = {TARGET_PARTITIONS}, {key_wcu:,.0f} WCU/s on the busiest"
        f" key at {rate:,.0f} first entries a second, which the keys bound at"
        f" {_bound(key_bound)}; and it holds that shard: the busiest of the"
        f" {target['count_shards_at_target']} ({COUNT_SHARDS} per key) is in"
        f" {shard.hottest_transactions:,.0f} transactions a second at {rate:,.0f} (1 first"
        f" entry in {1 / shard.hottest_share:,.1f}), within {TARGET_ITEM_TRANSACTIONS:,.0f}"
        f" up to {TARGET_ITEM_TRANSACTIONS / shard.hottest_share:,.0f} first entries a second"
        f" and {ITEM_TRANSACTIONS:,.0f} up to {_bound(shard.conflict_bound)}; {rate:,.0f}"
        " first entries a second take at least"
        f" {target['count_shards_for_first_entries']} shards to keep each within"
        f" {TARGET_ITEM_TRANSACTIONS:,.0f}.",
    ]
    return lines


def _index_lines(rows: Sequence[tuple[PhaseRun, Figures]], rate: float) -> list[str]:
    run, f = max(rows, key=lambda row: row[1].index_key_wcu)
    return [
        f"The index key the plays write most: `{run.busiest_index_key}`,"
        f" {_n(run.per_play(run.busiest_index_wcu))} WCU a play (every play of a game puts its"
        f" Session's entry there), {f.index_key_wcu:,.0f} WCU/s at {rate:,.0f} plays/s of one"
        f" game; it reaches {PARTITION_WCU:,.0f} WCU/s at {_bound(f.index_bound)} plays/s of"
        " one game, over all its boards, whatever their partitions.",
    ]


def _pages_table(pages: Sequence[PageCost]) -> list[str]:
    lines = [
        "| N | entries | DynamoDB calls | read units: board | Score partitions | names | total |",
        "|--:|--:|---|--:|--:|--:|--:|",
    ]
    for p in pages:
        calls = " + ".join(f"{n} {name}" if n != 1 else name for name, n in p.calls.items())
        lines.append(
            f"| {p.partitions} | {p.entries:,} | {calls} | {_n(p.board_read)} |"
            f" {_n(p.score_read)} | {_n(p.names_read)} | {_n(p.read)} |"
        )
    return lines


def _choosing_table(
    rows: Sequence[tuple[PhaseRun, Figures]], pages: Sequence[PageCost]
) -> list[str]:
    by_n = {p.partitions: p for p in pages}
    lines = [
        "| N | steady plays/s (the lowest ceiling of the operators) | first entries/s |"
        " uncached top 100: calls, read units |",
        "|--:|--:|--:|--:|",
    ]
    for row in choosing_partitions(rows):
        page = by_n.get(row["partitions"])
        cost = f"{page.call_count}, {_n(page.read)}" if page else "-"
        lines.append(
            f"| {row['partitions']} | {_bound(row['steady_plays_per_second'])} |"
            f" {_bound(row['first_entries_per_second'])} | {cost} |"
        )
    return lines


def sharded_markdown(
    runs: Sequence[PhaseRun],
    pages: Sequence[PageCost],
    balance: Balance | None,
    *,
    rate: float,
) -> list[str]:
    """The write-sharded boards' sections of the Markdown report."""
    if balance is None or not runs:
        return []
    rows = _figured(runs, rate, balance)
    spread = [s * n for n, s in balance.score_keys.items() if n > 1]
    shards = [s * n * COUNT_SHARDS for n, s in balance.count_shards.items()]
    lines = [
        "## Write-sharded boards: write units per partition key, and the hottest item",
        "",
        f"{runs[0].plays + runs[0].failed_plays} players of one game play a new board of each"
        " operator and N partitions through the table layer's submission path (`record_play`),"
        " each once (first entries: a new board's burst), then once more (steady: every player"
        f" entered; scores drawn from 0 to {_ranges()}). The"
        " write units of each play are measured on each partition key: the board's own"
        f" (`{LEADERBOARD.pk.fill(leaderboard_id='<id>')}`: its Score items and count shards"
        " when N = 1), its Score keys (N > 1: its Score items and count shards, 32 per key)"
        f" and the players' own; one transaction wrote at most {_keys(runs)} of the board. At"
        f" {rate:,.0f} plays/s the board's key receives that many times its units a play, and"
        " the busiest Score key its share of the players times the Score keys' units (the"
        f" busiest of N keys holds {min(spread, default=1):.3f} to {max(spread, default=1):.3f}"
        f" times the even share among {balance.players:,} players; the busiest of the 32·N"
        f" count shards {min(shards, default=1):.3f} to {max(shards, default=1):.3f})."
        f" Bounds: {PARTITION_WCU:,.0f} WCU/s per"
        f" partition key, {ITEM_TRANSACTIONS:,.0f} transactions a second per item"
        f" ({HOLD_SECONDS * 1000:.0f} ms each); the ceiling is the lower. The board's item was"
        f" held by {sum(r.board_item_transactions for r in runs)} transactions; items held by"
        f" the plays of more than one player: {_shared(runs, FIRST_ENTRIES)} in first entries,"
        f" {_shared(runs, STEADY)} in steady play.",
        "",
    ]
    for phase in PHASES:
        lines += [f"### {phase.capitalize()}", ""]
        lines += _phase_table([(r, f) for r, f in rows if r.phase == phase], rate)
        lines += [""]
    lines += ["### Choosing N", ""]
    lines += _choosing_table(rows, pages)
    lines += ["", "### Against the target", ""]
    lines += _target_lines(rows, rate)
    lines += ["", "### The game's index key", ""]
    lines += _index_lines(rows, rate)
    if pages:
        lines += [
            "",
            "## An uncached top 100 on N partitions",
            "",
            "The board (its item, with its count shards when N = 1: one Query; the page asks"
            " for no count, so a write-sharded board's are not read), one Query per partition"
            " of up to 101 Score items, merged, each holding its player's name (the names"
            " column: any players read for theirs); its"
            " latency beside its raw calls: `bench/results/access_patterns.md` (N = 8).",
            "",
        ]
        lines += _pages_table(pages)
    return lines


def _keys(runs: Sequence[PhaseRun]) -> str:
    """The most partition keys of the board one transaction of the runs wrote: "1 key"."""
    most = max(r.board_keys_per_transaction for r in runs)
    return f"{most} key{'s' if most != 1 else ''}"


def _ranges() -> str:
    """The largest score drawn per operator: "1,000 (BEST, LATEST), 10 (INCREMENT)"."""
    by_top: dict[int, list[str]] = {}
    for operator, top in SCORE_RANGE.items():
        by_top.setdefault(top, []).append(operator.value)
    return ", ".join(f"{top:,} ({', '.join(ops)})" for top, ops in by_top.items())


def _shared(runs: Sequence[PhaseRun], phase: str) -> str:
    """The items of the runs of ``phase`` held by the plays of more than one player, by kind."""
    merged: dict[str, int] = {}
    for run in runs:
        if run.phase == phase:
            for kind, n in run.shared_items.items():
                merged[kind] = merged.get(kind, 0) + n
    return ", ".join(f"{n} {kind}" for kind, n in sorted(merged.items())) or "none"
