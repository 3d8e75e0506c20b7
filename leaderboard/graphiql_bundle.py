"""GraphiQL's browser files as package data, so an installed service needs no network.

``python -m leaderboard.graphiql_bundle`` fetches the pinned npm tarballs (their sha512
checked against the pins, see :mod:`leaderboard.npm`) and writes the four files with a
manifest into ``leaderboard/graphiql_assets/``, which a wheel built afterwards includes. At
run time :func:`graphiql_assets` serves that folder when its manifest names the current pins
and every file still has the recorded digest; otherwise (a source checkout that never ran the
build step, or a stale folder) it falls back to fetching into the cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from leaderboard.config import default_cache_dir
from leaderboard.graphiql import ASSET_FILES, assets_key, ensure_graphiql_assets
from leaderboard.npm import FetchError

__all__ = ["MANIFEST_NAME", "PACKAGED_ASSETS", "graphiql_assets", "main", "packaged_assets"]

PACKAGED_ASSETS = Path(__file__).resolve().parent / "graphiql_assets"
"""The package folder a wheel ships the GraphiQL files in (git-ignored: built, not kept)."""
MANIFEST_NAME = "manifest.json"
log = logging.getLogger("leaderboard")


def graphiql_assets(cache_dir: Path, packaged: Path = PACKAGED_ASSETS) -> Path:
    """The folder to serve GraphiQL's files from: the packaged one when it is intact and
    matches the pins, else the cache's (fetched from npm on first use)."""
    found = packaged_assets(packaged)
    if found is not None:
        return found
    return ensure_graphiql_assets(cache_dir)


def packaged_assets(folder: Path = PACKAGED_ASSETS) -> Path | None:
    """``folder`` if it holds every file of the current pins with its recorded sha512."""
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("ignoring the packaged GraphiQL files in %s: %s", folder, exc)
        return None
    if manifest != _manifest(folder):
        log.warning("ignoring the packaged GraphiQL files in %s: not the pinned ones", folder)
        return None
    return folder


def write_packaged_assets(cache_dir: Path, folder: Path = PACKAGED_ASSETS) -> Path:
    """Fetch and verify the pinned files, then replace ``folder`` with them and a manifest.

    The folder is assembled beside its final place and swapped in, so a reader sees the old
    or the new set, never a mixture. Raises :class:`~leaderboard.npm.FetchError`.
    """
    source = ensure_graphiql_assets(cache_dir)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        for name in ASSET_FILES:
            shutil.copyfile(source / name, staging / name)
        (staging / MANIFEST_NAME).write_text(
            json.dumps(_manifest(staging), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        staging.chmod(0o755)
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=folder.parent))
        try:
            if folder.exists():
                folder.rename(old / "previous")
            staging.rename(folder)
        finally:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _manifest(folder: Path) -> dict[str, object]:
    """The pins' key and each file's sha512 as found in ``folder`` (missing files: None)."""
    digests: dict[str, str | None] = {}
    for name in ASSET_FILES:
        try:
            digests[name] = hashlib.sha512((folder / name).read_bytes()).hexdigest()
        except FileNotFoundError:
            digests[name] = None
    return {"key": assets_key(), "sha512": digests}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard.graphiql_bundle",
        description="Fetch GraphiQL's pinned npm files, verify them and write them into the "
        "package, so that a wheel built next ships them.",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=default_cache_dir(),
        help="where the npm tarballs are unpacked (default $LEADERBOARD_CACHE_DIR)",
    )
    parser.add_argument("--output", type=Path, default=PACKAGED_ASSETS, help="the folder to write")
    args = parser.parse_args(argv)
    try:
        folder = write_packaged_assets(args.cache_dir, args.output)
    except FetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"GraphiQL files for {assets_key()} written to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
