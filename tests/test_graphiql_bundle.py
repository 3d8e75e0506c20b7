"""GraphiQL's files as package data: written by the build step, preferred at run time only
while intact and matching the pins, else the cache's copy is served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard.config import default_cache_dir
from leaderboard.graphiql import ASSET_FILES, ensure_graphiql_assets
from leaderboard.graphiql_bundle import (
    MANIFEST_NAME,
    graphiql_assets,
    main,
    packaged_assets,
    write_packaged_assets,
)


@pytest.fixture
def cache() -> Path:
    return default_cache_dir()


@pytest.fixture
def packaged(cache: Path, tmp_path: Path) -> Path:
    return write_packaged_assets(cache, tmp_path / "graphiql_assets")


def test_the_build_step_writes_the_pinned_files_and_the_runtime_prefers_them(
    cache: Path, packaged: Path
) -> None:
    pinned = ensure_graphiql_assets(cache)
    assert sorted(p.name for p in packaged.iterdir()) == sorted([*ASSET_FILES, MANIFEST_NAME])
    for name in ASSET_FILES:
        assert (packaged / name).read_bytes() == (pinned / name).read_bytes()
    assert packaged_assets(packaged) == packaged
    assert graphiql_assets(cache, packaged) == packaged


def test_a_changed_file_makes_the_runtime_serve_the_cache_instead(
    cache: Path, packaged: Path
) -> None:
    script = packaged / "graphiql.min.js"
    script.write_bytes(script.read_bytes() + b"\n")
    assert packaged_assets(packaged) is None
    assert graphiql_assets(cache, packaged) == ensure_graphiql_assets(cache)


def test_files_written_for_other_pins_or_missing_are_not_used(
    cache: Path, packaged: Path, tmp_path: Path
) -> None:
    manifest = json.loads((packaged / MANIFEST_NAME).read_text())
    (packaged / MANIFEST_NAME).write_text(json.dumps({**manifest, "key": "graphiql-0.0.1-x"}))
    assert packaged_assets(packaged) is None
    (packaged / MANIFEST_NAME).write_text("{ not json")
    assert packaged_assets(packaged) is None
    assert packaged_assets(tmp_path / "never-built") is None
    assert graphiql_assets(cache, tmp_path / "never-built") == ensure_graphiql_assets(cache)


def test_running_the_step_again_replaces_the_folder_whole(cache: Path, packaged: Path) -> None:
    (packaged / "stray.txt").write_text("left over")
    (packaged / "graphiql.min.css").unlink()
    assert main(["--cache-dir", str(cache), "--output", str(packaged)]) == 0
    assert sorted(p.name for p in packaged.iterdir()) == sorted([*ASSET_FILES, MANIFEST_NAME])
    assert packaged_assets(packaged) == packaged
    assert [p.name for p in packaged.parent.iterdir()] == [packaged.name]
