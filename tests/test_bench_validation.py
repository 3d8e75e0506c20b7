"""bench.validation's report: its own run, and beside it the saved run of the former limits,
each table under the limits it ran with; the committed results are such a pair."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.validation.cli import DocumentTiming, EarlierRun, limits, markdown
from bench.validation.paths import PathTiming, measure_paths
from edge.validation import MAX_TOKENS

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results"

VALID = DocumentTiming(
    name="a document",
    characters=100,
    tokens=30,
    outcome="valid",
    errors=0,
    cold_p50_ms=1.5,
    cold_p99_ms=3.0,
    cold_max_ms=4.0,
    cached_p50_us=0.7,
)
UNLIMITED = replace(VALID, name="without limits", tokens=4002, cold_p50_ms=150.0)


def test_the_report_shows_the_earlier_run_under_its_own_limits() -> None:
    earlier = EarlierRun(
        limits={**limits(), "tokens": 250, "characters": 4096},
        load="1.0 / 1.0 / 1.0",
        code="abc1234",
        timings=[replace(VALID, name="an older document", cold_p50_ms=6.25)],
    )
    report = markdown([VALID], UNLIMITED, 200, "2.0 / 2.0 / 2.0", earlier)
    after, before = report.split("## Before: the saved run, under the earlier limits")
    assert "## After: this run" in after
    assert f"{MAX_TOKENS} tokens" in after
    assert "| a document | 100 | 30 | valid | 1.50 | 3.00 | 0.7 |" in after
    assert "- Code: abc1234; load average at the start: 1.0 / 1.0 / 1.0" in before
    assert "4096 characters, 250 tokens" in before
    assert "| an older document | 100 | 30 | valid | 6.25 | 3.00 | 0.7 |" in before
    assert "worst allowed document an older document, cold p50 6.25 ms" in after


def test_without_an_earlier_run_the_report_has_one_table() -> None:
    report = markdown([VALID], UNLIMITED, 200, "2.0 / 2.0 / 2.0")
    assert "## Before" not in report
    assert report.count("| document | chars | tokens |") == 1


def test_the_report_shows_the_rules_each_way() -> None:
    paths = [PathTiming(name="a document", tokens=30, full_p50_ms=4.0, fast_p50_ms=0.5)]
    report = markdown([VALID], UNLIMITED, 200, "2.0 / 2.0 / 2.0", paths=paths)
    assert "## The rules, each way" in report
    assert "| a document | 30 | 4.00 | 0.50 |" in report
    assert "## The rules, each way" not in markdown([VALID], UNLIMITED, 200, "2.0 / 2.0 / 2.0")


def test_each_way_is_timed_only_on_a_document_the_fast_path_is_sure_of() -> None:
    timing = measure_paths("one board", '{ leaderboard(id: "b") { id name } }', 2)
    assert (timing.name, timing.tokens) == ("one board", 12)
    with pytest.raises(ValueError, match="not sure"):
        measure_paths("unknown field", "{ nope }", 2)


def test_the_committed_results_are_a_run_and_the_run_before_it() -> None:
    after = json.loads((RESULTS / "validation.json").read_text())
    before = EarlierRun.read(RESULTS / "validation-before.json")
    assert after["limits"] == limits()
    assert before.limits["tokens"] < after["limits"]["tokens"]
    valid = [d["name"] for d in after["documents"] if d["outcome"] == "valid"]
    assert [p["name"] for p in after["paths"]] == valid
    committed = (RESULTS / "validation.md").read_text()
    assert "## After: this run" in committed
    assert "## The rules, each way" in committed
    assert "## Before: the saved run, under the earlier limits" in committed
