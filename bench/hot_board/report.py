"""What a hot-board run writes: ``hot_board.json`` (every number) and ``hot_board.md`` (a table
per phase, the most conflicted items, and the verdict against the targets)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.core.report import machine_lines, save_results
from bench.hot_board.clients import MAX_SCORE, PLAY
from bench.hot_board.results import CaseResult, HotBoardResult, PhaseResult

__all__ = [
    "BURST_SHARD_PERCENT",
    "ONE_BOARD_RATIO",
    "failed_plays",
    "hot_board_markdown",
    "hottest_lines",
    "phase_table",
    "ratio",
    "targets",
    "write_results",
]

BURST_SHARD_PERCENT = 5.0
"""Target: during the burst of first entries, conflicts on count shards at most this many per
hundred transactions."""
ONE_BOARD_RATIO = 0.9
"""Target: one board takes at least this share of the plays a second of the same load spread
over several boards (steady state, same run)."""
SUBMISSION_CONFLICT = "SUBMISSION_CONFLICT"


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _codes(errors: dict[str, int]) -> str:
    return ", ".join(f"{code} {n}" for code, n in errors.items()) or "none"


def phase_table(cases: Sequence[CaseResult], phase: str) -> list[str]:
    """One row per case: its plays in ``phase`` and the conflicts the proxy applied."""
    lines = [
        "| case | plays | acknowledged | plays/s | p50 ms | p99 ms | errors | transactions"
        " | conflicts | on count shards | on other items | count-shard conflicts per 100"
        " transactions | most in flight |",
        "|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|",
    ]
    for case in cases:
        result: PhaseResult = getattr(case, phase)
        p, c = result.plays, result.conflicts
        lines.append(
            f"| {case.name} | {p.plays} | {p.acknowledged} | {p.plays_per_second:.1f}"
            f" | {p.p50_ms:.0f} | {p.p99_ms:.0f} | {_codes(p.errors)} | {c.transactions}"
            f" | {c.conflicts} | {c.on_count_shards} | {c.elsewhere}"
            f" | {c.count_shard_percent:.2f} | {c.peak_in_flight} |"
        )
    return lines


def hottest_lines(cases: Sequence[CaseResult]) -> list[str]:
    """The most conflicted items of each case and phase, or that there were none."""
    lines: list[str] = []
    for case in cases:
        for result in (case.burst, case.steady):
            items = result.conflicts.hottest
            if not items:
                lines.append(f"- {_cap(case.name)}, {result.phase}: no conflict")
                continue
            kinds = ", ".join(f"{kind} {n}" for kind, n in result.conflicts.by_kind.items())
            lines.append(f"- {_cap(case.name)}, {result.phase}: {kinds}; the most conflicted:")
            lines += [
                f"  - `{item.item}` ({item.kind}): {item.conflicts} conflicts, held by"
                f" {item.held} transactions, {item.committed} committed"
                for item in items
            ]
    return lines


def _baseline(cases: Sequence[CaseResult]) -> CaseResult | None:
    return next((case for case in cases if case.spread), None)


def ratio(case: CaseResult, baseline: CaseResult) -> float | None:
    """The case's steady plays a second over the baseline's (None when it has none)."""
    rate = baseline.steady.plays.plays_per_second
    return case.steady.plays.plays_per_second / rate if rate > 0 else None


def targets(cases: Sequence[CaseResult]) -> list[str]:
    """The "Against the targets" bullet points."""
    lines = []
    conflicted = sum(
        getattr(case, phase).plays.errors.get(SUBMISSION_CONFLICT, 0)
        for case in cases
        for phase in ("burst", "steady")
    )
    lines.append(
        f"- `{SUBMISSION_CONFLICT}` in any phase of any case: {conflicted}:"
        f" {_verdict(conflicted == 0)} (target: none)"
    )
    for case in cases:
        steady = case.steady.conflicts
        lines.append(
            f"- Steady state, {case.name}: {steady.conflicts} conflicts between plays of"
            f" distinct players: {_verdict(steady.conflicts == 0)} (target: none once every"
            " player has an entry)"
        )
    for case in cases:
        burst = case.burst.conflicts
        lines.append(
            f"- Burst of first entries, {case.name}: {burst.on_count_shards} conflicts on count"
            f" shards in {burst.transactions} transactions ({burst.count_shard_percent:.2f} per"
            f" 100): {_verdict(burst.count_shard_percent <= BURST_SHARD_PERCENT)} (target: at"
            f" most {BURST_SHARD_PERCENT:g} per 100); on other items: {burst.elsewhere}"
        )
    baseline = _baseline(cases)
    for case in cases:
        if case.spread:
            continue
        share = ratio(case, baseline) if baseline is not None else None
        if baseline is None or share is None:
            lines.append(
                f"- {_cap(case.name)} against the same load spread: not measured in this run"
            )
            continue
        lines.append(
            f"- {_cap(case.name)}: {case.steady.plays.plays_per_second:.1f} plays/s in the steady"
            f" state, {share:.0%} of the {baseline.steady.plays.plays_per_second:.1f} of"
            f" {baseline.name}: {_verdict(share >= ONE_BOARD_RATIO)} (target: at least"
            f" {ONE_BOARD_RATIO:.0%})"
        )
    for case in cases:
        lines.append(
            f"- {_cap(case.name)}: every board's entryCount equals its players entered"
            f" ({sum(case.entered.values())}): {_verdict(case.counts_exact)}"
            + ("" if case.counts_exact else f" (entryCount {case.entry_counts})")
        )
    return lines


def _setup_lines(result: HotBoardResult) -> list[str]:
    s = result.settings
    cases = ", ".join(case.name for case in result.cases)
    return [
        *machine_lines(result.machine),
        "- Stack: `leaderboard serve --workers 1` in its own process, reaching DynamoDB Local"
        " through the fault proxy (`faultproxy/`, in a thread of the benchmark's process),"
        " which applies DynamoDB's transaction-conflict rule with every TransactWriteItems"
        f" holding its items {s['hold_seconds'] * 1000:g} ms longer (a real transaction's"
        " latency)",
        f"- Clients: {s['clients']} game-server clients in the benchmark's process, closed loop,"
        f" each playing its own {s['players_per_client']} players in turn ({s['players']}"
        " players; no player ever has two plays in flight): `submitScore` on a daily family's"
        f" board of the day (BEST), a random score from 0 to {MAX_SCORE:,}, a fresh"
        " `submissionId`; the answer asks for no rank",
        f"- Cases, in this order: {cases}; the spread case plays player number k on board"
        " k mod its boards. Each case has boards of its own, which its first plays create",
        "- Burst: each client plays each of its players once (every play a first entry on a"
        f" new board: a daily board at midnight). Steady state: then {s['steady_seconds']:g} s"
        " of each client playing its players in turn, every player having an entry. First"
        " entries meet only on their board's count shards (32, a player's picked by a hash of"
        " its id), and in one service process those counted in one shard wait for each other"
        " rather than conflict",
        f"- Before the first case, {s['prewarm_seconds']:g} s of unrecorded plays on a board of"
        " their own. The proxy's counts are reset before each phase",
        "- Plays/s: acknowledged plays over the phase's time to its last answer; latency of the"
        " acknowledged plays; transactions: the TransactWriteItems the service sent (retries"
        " after a conflict included); conflicts: requests the rule refused, on count shards"
        " and on other items (a refusal counted once per conflicting item)",
    ]


def hot_board_markdown(result: HotBoardResult) -> str:
    """The whole report."""
    lines = [
        "# One hot board under DynamoDB's transaction-conflict rule",
        "",
        *_setup_lines(result),
        "",
        "## Burst of first entries (a new board: every player's first play)",
        "",
        *phase_table(result.cases, "burst"),
        "",
        "## Steady state (every player has an entry)",
        "",
        *phase_table(result.cases, "steady"),
        "",
        "## Where the conflicts were",
        "",
        *hottest_lines(result.cases),
        "",
        "## Against the targets",
        "",
        *targets(result.cases),
        "",
        "## The play",
        "",
        "```graphql",
        PLAY,
        "```",
        "",
    ]
    if result.notes:
        lines += ["## Notes", "", *[f"- {note}" for note in result.notes], ""]
    lines.append(f"Total run time: {result.total_seconds:.1f} s.")
    return "\n".join(lines) + "\n"


def failed_plays(result: HotBoardResult) -> int:
    """Plays that failed, in every phase of every case."""
    return sum(
        sum(getattr(case, phase).plays.errors.values())
        for case in result.cases
        for phase in ("burst", "steady")
    )


def write_results(out: Path, result: HotBoardResult) -> str:
    """Write ``hot_board.json`` and ``hot_board.md`` into ``out``; the Markdown."""
    markdown = hot_board_markdown(result)
    save_results(out, "hot_board", result.document(), markdown)
    return markdown
