"""The pure parts the benchmarks share (bench.core): percentiles, call counts, the files a
benchmark writes and the lines describing the machine, the report's tables of levels, and the
repository's files the benchmarks find."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from bench.core.charts import write_charts
from bench.core.documents import OPERATIONS_DIR, example_operation
from bench.core.load.cache_metrics import CacheCounts, parse_cache_counts
from bench.core.load.hotspots import category
from bench.core.load.levels import KindStats, LevelResult
from bench.core.load.loadgen import MIX
from bench.core.load.tables import errors_section, kinds_table, levels_table
from bench.core.measure import BenchError, format_calls, percentiles
from bench.core.procstat import children, cpu_seconds, descendants, tree_cpu_seconds
from bench.core.report import machine_lines, run_document, save_json, save_results
from bench.fleet.chart import fleet_chart
from bench.fleet.configs import Configuration, configurations
from bench.fleet.report import single_ratio, targets, write_results
from bench.fleet.results import FleetResult, Measured


@dataclass(frozen=True)
class _Part:
    entries: int
    seconds: float


ROOT = Path(__file__).resolve().parent.parent

MACHINE = {
    "cpu_count": 2,
    "platform": "Linux-6.1-x86_64",
    "python": "3.11.9",
    "implementation": "CPython",
    "dynamodb_local": "2.5.2",
    "dynamodb_local_package": "dynamodb-local@1.0.0",
}


# -- percentiles ---------------------------------------------------------------------------


def test_percentiles_of_no_samples_are_zero() -> None:
    assert percentiles([]) == (0.0, 0.0, 0.0)


def test_percentiles_of_one_sample_are_that_sample() -> None:
    assert percentiles([7.5]) == (7.5, 7.5, 7.5)


def test_percentiles_of_two_samples_interpolate_between_them() -> None:
    assert percentiles([0.0, 10.0]) == pytest.approx((5.0, 9.5, 9.9))


def test_percentiles_of_one_to_a_hundred() -> None:
    assert percentiles([float(n) for n in range(1, 101)]) == pytest.approx((50.5, 95.05, 99.01))


def test_percentiles_do_not_depend_on_the_order_of_the_samples() -> None:
    samples = [float(n) for n in range(1, 101)]
    assert percentiles(samples[::-1]) == percentiles(samples)


def test_percentiles_of_equal_samples_are_that_value() -> None:
    assert percentiles([3.0] * 10) == pytest.approx((3.0, 3.0, 3.0))


# -- call counts and errors ----------------------------------------------------------------


def test_no_calls_read_none() -> None:
    assert format_calls({}) == "none"


def test_calls_keep_their_order_and_carry_a_count_past_one() -> None:
    calls = {"GetItem": 1, "Query": 2, "BatchGetItem": 1}
    assert format_calls(calls) == "GetItem+Query\N{MULTIPLICATION SIGN}2+BatchGetItem"


def test_a_bench_error_carries_its_code() -> None:
    assert BenchError("failed").code == "BENCH_ERROR"
    assert BenchError("throttled", code="THROTTLED").code == "THROTTLED"


# -- results written -----------------------------------------------------------------------


def test_save_results_writes_the_json_and_markdown_pair(tmp_path: Path) -> None:
    out = tmp_path / "results" / "nested"
    save_results(out, "sample", {"n": 1, "rows": [1.5, 2]}, "# Title\n\ntext\n\n\n")
    assert sorted(p.name for p in out.iterdir()) == ["sample.json", "sample.md"]
    assert (out / "sample.json").read_text() == (
        '{\n  "n": 1,\n  "rows": [\n    1.5,\n    2\n  ]\n}\n'
    )
    assert (out / "sample.md").read_text() == "# Title\n\ntext\n"


def test_save_results_ends_the_markdown_in_one_newline(tmp_path: Path) -> None:
    save_results(tmp_path, "bare", [], "no newline")
    assert (tmp_path / "bare.md").read_text() == "no newline\n"
    assert json.loads((tmp_path / "bare.json").read_text()) == []


def test_save_results_replaces_an_earlier_run(tmp_path: Path) -> None:
    save_results(tmp_path, "run", {"run": 1}, "first")
    save_results(tmp_path, "run", {"run": 2}, "second")
    assert json.loads((tmp_path / "run.json").read_text()) == {"run": 2}
    assert (tmp_path / "run.md").read_text() == "second\n"


def test_save_json_writes_only_the_json(tmp_path: Path) -> None:
    path = save_json(tmp_path / "out", "memory", {"bytes": 10})
    assert path == tmp_path / "out" / "memory.json"
    assert path.read_text() == '{\n  "bytes": 10\n}\n'
    assert [p.name for p in path.parent.iterdir()] == ["memory.json"]


def test_run_document_lists_each_part_and_rounds_the_run_time() -> None:
    document = run_document(
        machine=MACHINE,
        settings={"seed": 42},
        key="sizes",
        parts=[_Part(10, 1.25), _Part(100, 2.5)],
        total_seconds=12.345,
    )
    assert document == {
        "machine": MACHINE,
        "settings": {"seed": 42},
        "sizes": [{"entries": 10, "seconds": 1.25}, {"entries": 100, "seconds": 2.5}],
        "total_seconds": 12.3,
    }
    assert list(document) == ["machine", "settings", "sizes", "total_seconds"]


def test_machine_lines_describe_the_machine() -> None:
    assert machine_lines(MACHINE) == [
        "- Machine: 2 cores (Linux-6.1-x86_64)",
        "- Python 3.11.9 (CPython)",
        "- DynamoDB Local 2.5.2 in memory (npm dynamodb-local@1.0.0), on the same machine",
    ]


def test_no_chart_is_drawn_without_results(tmp_path: Path) -> None:
    assert write_charts(tmp_path) == []
    assert list(tmp_path.iterdir()) == []


# -- tables of levels ----------------------------------------------------------------------


def _level(clients: int, *, errors: dict[str, int] | None = None) -> LevelResult:
    kind = KindStats(
        kind="rank",
        requests=40,
        p50_ms=2.0,
        p95_ms=3.0,
        p99_ms=4.0,
        mean_ms=2.2,
        errors=errors or {},
    )
    return LevelResult(
        clients=clients,
        generators=1,
        window_seconds=10.0,
        requests=400,
        throughput_rps=40.0,
        p50_ms=5.0,
        p95_ms=8.0,
        p99_ms=9.5,
        mean_ms=5.5,
        kinds=[kind],
        errors=errors or {},
        error_samples=["rank: HTTP 503"] if errors else [],
        cpu_cores={"service": 0.5, "machine": 1.0},
        service_rss_mib=80.0,
        service_hwm_mib=90.0,
        load_average=(0.5, 1.25),
        generator_started_late_ms=0.0,
    )


def test_levels_table_has_a_row_per_level() -> None:
    rows = levels_table([_level(1), _level(8)])
    assert len(rows) == 4
    assert rows[0].startswith("| clients | req/s |")
    assert rows[2] == (
        "| 1 | 40 | 5.0 | 8.0 | 9.5 | 0 | 80 (90) | 0.50 / - / - / - / - / - / 1.00 | 12.5 |"
        " 0.5 / 1.2 |"
    )


def test_kinds_table_shows_each_kind_of_the_mix() -> None:
    rows = kinds_table([_level(8)])
    assert rows[0] == "| kind | share | 8 clients |"
    rank = [row for row in rows if row.startswith("| rank ")]
    share = dict(MIX)["rank"]
    assert rank == [f"| rank (`PlayerRank`, main board) | {share}% | 2.0 / 4.0 (40) |"]
    assert len(rows) == 2 + len(MIX)
    assert all(row.endswith("| - |") for row in rows[2:] if row not in rank)


def test_errors_section_without_failures_says_so() -> None:
    (line,) = errors_section([_level(1)])
    assert line.startswith("No request failed")


def test_errors_section_lists_failures_by_level_kind_and_code() -> None:
    lines = errors_section([_level(1), _level(8, errors={"SERVICE_OVERLOADED": 3})])
    assert "| 8 | rank | SERVICE_OVERLOADED | 3 |" in lines
    assert lines[-1] == "- `rank: HTTP 503`"


# -- the repository's files ----------------------------------------------------------------


def test_the_frontend_operations_are_found() -> None:
    assert OPERATIONS_DIR == ROOT / "examples" / "operations"
    assert "query LeaderboardPage" in example_operation("LeaderboardPage")


def test_hot_spots_in_the_service_are_put_under_its_package() -> None:
    assert category(str(ROOT / "edge" / "view.py")) == "service:edge"
    assert category(str(ROOT / "gql" / "schema.py")) == "service:gql"
    assert category(str(ROOT / "dynamo" / "table.py")) == "service:dynamo"


# -- the fleet: the response cache's counters, CPU of a process tree, configurations, report


_EXPOSITION = """# HELP leaderboard_cache_hits_total Queries answered from the response cache.
# TYPE leaderboard_cache_hits_total counter
leaderboard_cache_hits_total 120.0
leaderboard_cache_hits_created 1.7955e+09
# HELP leaderboard_cache_misses_total Cacheable queries the response cache had no answer for.
# TYPE leaderboard_cache_misses_total counter
leaderboard_cache_misses_total{pid="12"} 30.0
leaderboard_cache_misses_total{pid="13"} 10.0
leaderboard_cache_evictions_total 7.0
"""


def test_cache_counts_are_read_from_a_scrape_adding_up_labelled_samples() -> None:
    counts = parse_cache_counts(_EXPOSITION)
    assert counts == CacheCounts(hits=120.0, misses=40.0)


def test_a_scrape_without_the_cache_counters_counts_nothing() -> None:
    assert parse_cache_counts("# nothing here\nleaderboard_requests_total 5\n") == CacheCounts(
        0.0, 0.0
    )


def test_the_hit_ratio_of_a_window_is_of_the_lookups_between_two_scrapes() -> None:
    before, after = CacheCounts(100.0, 50.0), CacheCounts(190.0, 60.0)
    window = after.since(before)
    assert window == CacheCounts(90.0, 10.0)
    assert window.ratio == pytest.approx(0.9)


def test_a_window_without_lookups_has_no_hit_ratio() -> None:
    assert CacheCounts(5.0, 5.0).since(CacheCounts(5.0, 5.0)).ratio is None


def test_a_level_reports_its_hit_ratio_and_service_cpu_per_request() -> None:
    level = replace(_level(8), cache_hits=75.0, cache_misses=25.0)
    assert level.cache_hit_ratio == pytest.approx(0.75)
    # 0.5 cores over a 10 s window is 5 CPU seconds, over 400 requests.
    assert level.service_cpu_ms_per_request == pytest.approx(12.5)


def test_a_level_without_a_service_or_counts_reports_neither() -> None:
    level = replace(_level(8), cpu_cores={"machine": 1.0})
    assert level.service_cpu_ms_per_request is None
    assert level.cache_hit_ratio is None


def test_the_cpu_of_a_process_tree_adds_up_its_children() -> None:
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    script = f"import subprocess, sys, time\n{burn}time.sleep(30)\n"
    child = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while cpu_seconds(child.pid) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.pid in descendants(os.getpid())
        own = cpu_seconds(os.getpid())
        assert tree_cpu_seconds(os.getpid()) >= own + cpu_seconds(child.pid) - 0.05
    finally:
        child.kill()
        child.wait()


def test_descendants_reach_grandchildren() -> None:
    shell = subprocess.Popen(["sh", "-c", "sleep 30 & wait"])
    try:
        deadline = time.monotonic() + 30
        while not children(shell.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (grandchild,) = children(shell.pid)
        assert {shell.pid, grandchild} <= set(descendants(os.getpid()))
    finally:
        for pid in children(shell.pid):
            os.kill(pid, signal.SIGKILL)
        shell.kill()
        shell.wait()


def test_the_fleet_measures_the_raw_calls_then_one_and_several_workers_cache_off_and_on() -> None:
    assert [c.name for c in configurations(2)] == [
        "raw calls",
        "1 worker, cache off",
        "1 worker, cache on",
        "2 workers, cache off",
        "2 workers, cache on",
    ]
    assert [c.name for c in configurations(1)] == [
        "raw calls",
        "1 worker, cache off",
        "1 worker, cache on",
    ]
    assert [c.single for c in configurations(2)] == [True, True, True, False, False]


def test_cache_off_sets_the_cache_size_to_zero_and_on_keeps_the_default() -> None:
    off, on = Configuration(1, False), Configuration(1, True)
    assert off.environment == {"LEADERBOARD_CACHE_MB": "0"}
    assert on.environment == {}


def _measured(
    name: str, workers: int, cache: bool, rps: float, p99: float, single_p50: float | None
) -> Measured:
    level = replace(_level(32), throughput_rps=rps, p99_ms=p99, requests=int(rps * 10))
    single = replace(_level(1), p50_ms=single_p50) if single_p50 is not None else None
    return Measured(name, workers, cache, [level], single)


def _fleet() -> FleetResult:
    return FleetResult(
        machine={
            "cpu_count": 2,
            "platform": "Linux",
            "python": "3.11.7",
            "implementation": "CPython",
            "dynamodb_local": "3.1.0",
            "dynamodb_local_package": "dynamodb-local@1",
        },
        settings={
            "generators": 1,
            "prewarm_seconds": 8,
            "prewarm_clients": 8,
            "warmup_seconds": 5,
            "duration_seconds": 15,
            "workers": 2,
            "single_duration_seconds": 10,
        },
        setup={"boards": {"bench": 10_000}, "items": 30_000},
        measured=[
            _measured("raw calls", 0, False, 900.0, 60.0, 10.0),
            _measured("1 worker, cache off", 1, False, 250.0, 300.0, 12.0),
            _measured("1 worker, cache on", 1, True, 400.0, 200.0, 1.5),
            _measured("2 workers, cache on", 2, True, 500.0, 150.0, None),
        ],
        total_seconds=321.0,
    )


def test_the_fleet_targets_judge_every_service_configuration_and_the_top_100_page() -> None:
    lines = targets(_fleet())
    assert lines[0].startswith("- 1 worker, cache off, 32 clients: 250 req/s: NOT met")
    assert "p99 300 ms: NOT met" in lines[0]
    assert lines[1].startswith("- 1 worker, cache on, 32 clients: 400 req/s: met")
    assert "p99 200 ms: met" in lines[1]
    assert not any(line.startswith("- raw calls") for line in lines)
    # 0.5 service cores over 10 s and 2,500 requests: 2 ms each.
    assert "1 worker, cache off, 32 clients: 2.00 ms: met" in "\n".join(lines)
    assert any("from the cache (1 worker, 1 client): p50 1.50 ms: met" in line for line in lines)
    assert any("12.00 ms vs 10.00 ms for the raw calls, 1.20x: met" in line for line in lines)
    assert lines[-1] == "- Failed requests (and raw calls) over every run: 0: met (target: none)"


def test_the_single_kind_ratio_is_to_the_raw_calls_p50() -> None:
    raw = replace(_level(1), p50_ms=8.0)
    assert single_ratio(replace(_level(1), p50_ms=12.0), raw) == pytest.approx(1.5)
    assert single_ratio(raw, None) is None


def test_the_fleet_report_has_every_table_and_its_chart(tmp_path: Path) -> None:
    result = _fleet()
    markdown = write_results(tmp_path, result)
    assert (tmp_path / "fleet.md").read_text() == markdown
    assert "| 2 workers, cache on | 32 | 500 |" in markdown
    assert "## Against the targets" in markdown
    document = json.loads((tmp_path / "fleet.json").read_text())
    assert [m["name"] for m in document["measured"]] == [m.name for m in result.measured]
    assert document["measured"][1]["levels"][0]["service_cpu_ms_per_request"] == pytest.approx(2.0)
    chart = fleet_chart(result, tmp_path / "fleet.png")
    assert chart.read_bytes().startswith(b"\x89PNG")
