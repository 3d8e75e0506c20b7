"""What the under-attack benchmark writes: ``attack.json`` (every number) and ``attack.md`` (the
documents probed, the two runs side by side, the attackers' answers and the verdict)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from bench.attack.documents import MAX_CHARACTERS, MAX_TOKENS
from bench.attack.results import AttackRunResult
from bench.core.load.hotspots import hotspots_markdown
from bench.core.load.loadgen import MIX
from bench.core.load.tables import CPU_COLUMNS, errors_section, kinds_table, levels_table
from bench.core.report import ATTACK_P99_RATIO, machine_lines, save_results
from edge.cost_model import MAX_COST

__all__ = ["attack_markdown", "target_line", "write_results"]

_RUNS = ("without attackers", "under attack")
_CPU = (*CPU_COLUMNS[:-2], ("attackers", "attackers"), *CPU_COLUMNS[-2:])


def target_line(result: AttackRunResult) -> str:
    """The verdict against the target."""
    verdict = "met" if result.target_met else "NOT met"
    return (
        f"- Legitimate p99 under attack / without: {result.under_attack.p99_ms:.1f} ms /"
        f" {result.without.p99_ms:.1f} ms = {result.p99_ratio:.2f}x: {verdict} (target: at"
        f" most {ATTACK_P99_RATIO:g}x)"
    )


def _probes_table(result: AttackRunResult) -> list[str]:
    rows = [
        "| document | reads | list | cost | p50 ms | max ms | DynamoDB calls | answers |",
        "|---|---|--:|--:|--:|--:|--:|---|",
    ]
    for p in result.probes:
        chosen = " **(sent)**" if p.name == result.attackers.document else ""
        answers = ", ".join(f"{k} \N{MULTIPLICATION SIGN}{n}" for k, n in p.outcomes.items())
        rows.append(
            f"| `{p.name}`{chosen} | {p.description} | {p.size} | {p.cost} | {p.p50_ms:.0f} |"
            f" {p.max_ms:.0f} | {p.dynamodb_calls} | {answers} |"
        )
    return rows


def _attackers_table(result: AttackRunResult) -> list[str]:
    a = result.attackers
    rows = ["| answer | requests | per second | p50 ms |", "|---|--:|--:|--:|"]
    window = result.under_attack.window_seconds
    for outcome, count in a.outcomes.items():
        rows.append(
            f"| {outcome} | {count} | {count / window:.1f} | {a.p50_ms.get(outcome, 0.0):.1f} |"
        )
    rows.append(f"| all | {a.requests} | {a.requests_per_second:.1f} | |")
    return rows


def attack_markdown(result: AttackRunResult) -> str:
    """The whole report."""
    s, setup, a = result.settings, result.setup, result.attackers
    board_text = ", ".join(f"{board} {count:,}" for board, count in setup["boards"].items())
    lines = [
        "# The mixed workload under attack",
        "",
        *machine_lines(result.machine),
        "- Service: `leaderboard serve` in its own process with "
        + ", ".join(f"`{k}={v}`" for k, v in s["service_environment"].items())
        + " (every client claims its own address in X-Forwarded-For, as behind a load"
        " balancer) and every other limit at its default; ranks from the Redis rank index."
        " DynamoDB Local, Redis, the projector, the load generator and the attackers share"
        " the same cores",
        f"- Data: {board_text} players ({setup['items']:,} items)",
        f"- Legitimate clients: {s['clients'][0]} closed-loop clients of the mixed workload"
        " (" + ", ".join(f"{kind} {weight}%" for kind, weight in MIX) + "), with the API key"
        f" as in `python -m bench.mixed`, each from its own address in"
        f" {s['client_addresses']}; after {s['prewarm_seconds']:g} s of unrecorded load, each"
        f" run {s['warmup_seconds']:g} s of warm-up, then {s['duration_seconds']:g} s measured",
        f"- Attackers: {a.attackers} anonymous closed-loop clients in a process of their own,"
        f" each from its own address in {s['attacker_addresses']}, sending `{a.document}`"
        f" (cost {a.cost} of the {MAX_COST} allowed) as fast as they are answered, ignoring"
        " Retry-After, through the warm-up and the window of run 2",
        "",
        "## The costliest documents",
        "",
        f"Each at the longest list that keeps its cost within {MAX_COST}, valid within"
        f" {MAX_TOKENS} tokens and {MAX_CHARACTERS} characters (id lists in the variables),"
        f" sent {s['probes']} times alone, each time from a fresh address; the slowest is the"
        " attackers' document.",
        "",
        *_probes_table(result),
        "",
        "## The legitimate clients",
        "",
        *levels_table([result.without, result.under_attack], labels=_RUNS, cpu_columns=_CPU),
        "",
        "CPU cores: CPU seconds per second of the measured window (1.00 = one core busy; the"
        f" machine has {result.machine.get('cpu_count', '?')}); *other* is the machine's busy"
        " time none of the benchmark's processes account for.",
        "",
        "### Latency by kind: p50 / p99 ms (successful requests in the window)",
        "",
        *kinds_table([result.without, result.under_attack], labels=_RUNS),
        "",
        "### Errors",
        "",
        *errors_section([result.without, result.under_attack], labels=_RUNS),
        "",
        "## The attackers' answers (run 2's window)",
        "",
        *_attackers_table(result),
        "",
        f"Requests that ran: {a.ran_per_second:.2f} a second, making"
        f" {a.dynamodb_calls_per_second:.0f} DynamoDB calls a second. Attackers' process:"
        f" {a.cpu_cores:.2f} cores.",
        "",
        "## Against the target",
        "",
        target_line(result),
        "",
    ]
    if result.notes:
        lines += ["## Notes", "", *[f"- {note}" for note in result.notes], ""]
    if result.hotspots is not None:
        lines += [
            hotspots_markdown(
                result.hotspots, title="## Where the service's CPU goes under attack"
            ),
            "",
        ]
    lines.append(f"Total run time: {result.total_seconds:.1f} s.")
    return "\n".join(lines) + "\n"


def write_results(out: Path, result: AttackRunResult) -> str:
    """Write ``attack.json`` and ``attack.md`` into ``out``; the Markdown."""
    markdown = attack_markdown(result)
    save_results(out, "attack", asdict(result), markdown)
    return markdown
