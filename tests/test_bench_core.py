"""The pure parts the benchmarks share (bench.core): percentiles, call counts, the files a
benchmark writes and the lines describing the machine, the report's tables of levels, and the
repository's files the benchmarks find."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.core.charts import write_charts
from bench.core.documents import OPERATIONS_DIR, example_operation
from bench.core.load.hotspots import category
from bench.core.load.levels import KindStats, LevelResult
from bench.core.load.loadgen import MIX
from bench.core.load.tables import errors_section, kinds_table, levels_table
from bench.core.measure import BenchError, format_calls, percentiles
from bench.core.report import machine_lines, run_document, save_json, save_results


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
    assert category(str(ROOT / "gql" / "view.py")) == "service:gql"
    assert category(str(ROOT / "dynamo" / "table.py")) == "service:dynamo"
