"""Every benchmark runs as ``python -m bench.<name>``: each entry point parses its command line
(``--help`` prints its usage under that name and exits 0)."""

from __future__ import annotations

import runpy
import sys

import pytest

ENTRY_POINTS = (
    "bench",
    "bench.access_patterns",
    "bench.attack",
    "bench.capacity",
    "bench.cpu",
    "bench.fleet",
    "bench.hot_board",
    "bench.hotspots",
    "bench.mixed",
    "bench.moderation",
    "bench.rank_index",
    "bench.rank_index_memory",
    "bench.season_close",
    "bench.socket_flood",
    "bench.validation",
)


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_each_benchmark_runs_as_a_module(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", [name, "--help"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(name, run_name="__main__", alter_sys=False)
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m {name}")
