"""Tests for leaderboard.npm: real npm downloads and a scripted stand-in for failure cases."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from leaderboard.npm import FetchError, NpmPackage, fetch_package, package_root

__all__: list[str] = []

REACT = NpmPackage(
    "react",
    "18.3.1",
    "sha512-wS+hAgJShR0KhEvPJArfuPVN1+Hz1t0Y6n5jLrGQbkb4urgPE/0Rve+1kMB1v/oWgHgm4WIcV+i7F2pTVj+2iQ==",
)
# react-dom's integrity: well formed, but not the digest of react's tarball.
WRONG_INTEGRITY = (
    "sha512-5m4nQKp+rZRb09LNH59GM4BxTh9251/ylbKIbpe7TpGxfJ+9kv6"
    "BLkLBXIjjspbgbnIBNqlI23tRnTWT0snUIw=="
)

_FAKE_NPM = """#!{python}
import pathlib, shutil, sys, time
args = sys.argv[1:]
with open({calls!r}, "a") as log:
    log.write(" ".join(args) + "\\n")
time.sleep({delay!r})
if {exit_code!r}:
    print("npm error code E404 Not Found", file=sys.stderr)
    sys.exit({exit_code!r})
destination = pathlib.Path(args[args.index("--pack-destination") + 1])
shutil.copyfile({tarball!r}, destination / "fake-1.0.0.tgz")
print("[]")
"""


@pytest.fixture
def cache_dir() -> Path:
    """The shared download cache, kept across test runs."""
    configured = os.environ.get("LEADERBOARD_CACHE_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[1] / ".cache"


class FakeNpm:
    """An executable ``npm`` on PATH that copies a prepared tarball and logs its calls."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True)
        self.calls_file = folder / "calls.txt"
        self.calls_file.touch()
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")

    def install(self, tarball: Path, *, exit_code: int = 0, delay: float = 0.0) -> None:
        script = self.bin / "npm"
        script.write_text(
            _FAKE_NPM.format(
                python=sys.executable,
                calls=str(self.calls_file),
                delay=delay,
                exit_code=exit_code,
                tarball=str(tarball),
            ),
            encoding="utf-8",
        )
        script.chmod(0o755)

    @property
    def calls(self) -> list[str]:
        return self.calls_file.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeNpm:
    return FakeNpm(tmp_path / "fake-npm", monkeypatch)


def make_tarball(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> str:
    """Write a gzip tarball with ``members`` (and symlinks), returning its sha512 integrity."""
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def all_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*")) if folder.exists() else []


GOOD_MEMBERS = {
    "package/package.json": b'{"name": "fake", "version": "1.0.0"}',
    "package/lib/index.js": b"module.exports = 42;\n",
}


def test_fetches_real_package_and_second_fetch_does_not_run_npm(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = fetch_package(REACT, cache_dir)

    assert folder == package_root(REACT, cache_dir.absolute()) / "package"
    manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["version"]) == ("react", "18.3.1")
    assert (folder / "umd" / "react.production.min.js").stat().st_size > 1000
    marker = folder.parent / ".npm-package.json"
    mtime = marker.stat().st_mtime_ns

    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))  # npm cannot be found any more

    def no_subprocess(*args: object, **kwargs: object) -> None:
        raise AssertionError("npm must not run for a cached package")

    monkeypatch.setattr(subprocess, "run", no_subprocess)

    assert fetch_package(REACT, cache_dir) == folder
    assert marker.stat().st_mtime_ns == mtime


def test_wrong_integrity_from_real_registry_raises_and_leaves_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    tampered = NpmPackage(REACT.name, REACT.version, WRONG_INTEGRITY)

    with pytest.raises(FetchError, match=r"integrity check failed for react@18\.3\.1") as info:
        fetch_package(tampered, cache)

    assert REACT.integrity in str(info.value)  # the digest actually downloaded is reported
    assert all_files(cache) == []


def test_fake_npm_fetch_unpacks_then_is_a_no_op(tmp_path: Path, fake_npm: FakeNpm) -> None:
    integrity = make_tarball(tmp_path / "fake.tgz", GOOD_MEMBERS)
    fake_npm.install(tmp_path / "fake.tgz")
    package = NpmPackage("fake", "1.0.0", integrity)
    cache = tmp_path / "cache"

    folder = fetch_package(package, cache)

    assert folder == cache / "npm" / "fake-1.0.0" / "package"
    assert (folder / "lib" / "index.js").read_bytes() == b"module.exports = 42;\n"
    assert len(fake_npm.calls) == 1
    assert fake_npm.calls[0].startswith("pack fake@1.0.0 --json --pack-destination ")
    marker = folder.parent / ".npm-package.json"
    mtime = marker.stat().st_mtime_ns
    # Only the finished entry remains: the working folder is gone.
    assert sorted(p.name for p in cache.iterdir()) == ["npm"]

    assert fetch_package(package, cache) == folder
    assert len(fake_npm.calls) == 1
    assert marker.stat().st_mtime_ns == mtime


def test_scoped_package_name_maps_to_one_folder(tmp_path: Path, fake_npm: FakeNpm) -> None:
    integrity = make_tarball(tmp_path / "fake.tgz", GOOD_MEMBERS)
    fake_npm.install(tmp_path / "fake.tgz")

    folder = fetch_package(NpmPackage("@scope/fake", "1.0.0", integrity), tmp_path / "cache")

    assert folder == tmp_path / "cache" / "npm" / "@scope+fake-1.0.0" / "package"
    assert (folder / "package.json").is_file()


def test_integrity_mismatch_leaves_nothing(tmp_path: Path, fake_npm: FakeNpm) -> None:
    make_tarball(tmp_path / "fake.tgz", GOOD_MEMBERS)
    fake_npm.install(tmp_path / "fake.tgz")
    cache = tmp_path / "cache"

    with pytest.raises(FetchError, match="integrity check failed"):
        fetch_package(NpmPackage("fake", "1.0.0", WRONG_INTEGRITY), cache)

    assert len(fake_npm.calls) == 1
    assert all_files(cache) == []


def test_npm_failure_reports_its_output(tmp_path: Path, fake_npm: FakeNpm) -> None:
    integrity = make_tarball(tmp_path / "fake.tgz", GOOD_MEMBERS)
    fake_npm.install(tmp_path / "fake.tgz", exit_code=1)
    cache = tmp_path / "cache"

    with pytest.raises(FetchError, match="exit code 1") as info:
        fetch_package(NpmPackage("fake", "1.0.0", integrity), cache)

    assert "E404 Not Found" in str(info.value)
    assert "registry is reachable" in str(info.value)
    assert all_files(cache) == []


def test_missing_npm_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))

    with pytest.raises(FetchError, match=r"apt-get install npm"):
        fetch_package(REACT, tmp_path / "cache")

    assert all_files(tmp_path / "cache") == []


@pytest.mark.parametrize(
    ("members", "links"),
    [
        ({**GOOD_MEMBERS, "package/../../escaped.txt": b"outside"}, None),
        (GOOD_MEMBERS, {"package/up": "../../.."}),
        (GOOD_MEMBERS, {"package/passwd": "/etc/passwd"}),
    ],
    ids=["parent-dir", "relative-symlink-outside", "absolute-symlink"],
)
def test_unsafe_tarball_is_rejected(
    tmp_path: Path,
    fake_npm: FakeNpm,
    members: dict[str, bytes],
    links: dict[str, str] | None,
) -> None:
    cache = tmp_path / "deep" / "cache"
    integrity = make_tarball(tmp_path / "fake.tgz", members, links)
    fake_npm.install(tmp_path / "fake.tgz")

    with pytest.raises(FetchError, match="could not unpack"):
        fetch_package(NpmPackage("fake", "1.0.0", integrity), cache)

    assert all_files(cache) == []
    assert not (tmp_path / "deep" / "escaped.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()


def test_absolute_member_name_stays_inside_the_cache(tmp_path: Path, fake_npm: FakeNpm) -> None:
    outside = tmp_path / "absolute-escape.txt"
    integrity = make_tarball(tmp_path / "fake.tgz", {**GOOD_MEMBERS, str(outside): b"outside"})
    fake_npm.install(tmp_path / "fake.tgz")

    folder = fetch_package(NpmPackage("fake", "1.0.0", integrity), tmp_path / "cache")

    assert not outside.exists()
    contained = folder.parent / str(outside).lstrip("/")
    assert contained.read_bytes() == b"outside"


def test_tarball_without_package_folder_is_rejected(tmp_path: Path, fake_npm: FakeNpm) -> None:
    integrity = make_tarball(tmp_path / "fake.tgz", {"node/package.json": b"{}"})
    fake_npm.install(tmp_path / "fake.tgz")
    cache = tmp_path / "cache"

    with pytest.raises(FetchError, match="no top-level package/ folder"):
        fetch_package(NpmPackage("fake", "1.0.0", integrity), cache)

    assert all_files(cache) == []


@pytest.mark.parametrize(
    ("package", "message"),
    [
        (NpmPackage("fake", "^1.0.0", REACT.integrity), "not an exact version"),
        (NpmPackage("fake", "latest", REACT.integrity), "not an exact version"),
        (NpmPackage("../fake", "1.0.0", REACT.integrity), "not a valid npm package name"),
        (NpmPackage("--registry=x", "1.0.0", REACT.integrity), "not a valid npm package name"),
        (NpmPackage("fake", "1.0.0", "sha1-abc"), "has no sha512 entry"),
        (NpmPackage("fake", "1.0.0", "sha512-not*base64"), "is malformed"),
        (NpmPackage("fake", "1.0.0", "sha512-AAAA"), "is malformed"),
    ],
)
def test_invalid_pins_are_rejected_before_npm_runs(
    tmp_path: Path, fake_npm: FakeNpm, package: NpmPackage, message: str
) -> None:
    fake_npm.install(tmp_path / "unused.tgz")

    with pytest.raises(FetchError, match=message):
        fetch_package(package, tmp_path / "cache")

    assert fake_npm.calls == []
    assert not (tmp_path / "cache").exists()


def test_entry_verified_against_another_integrity_is_refused(
    tmp_path: Path, fake_npm: FakeNpm
) -> None:
    integrity = make_tarball(tmp_path / "fake.tgz", GOOD_MEMBERS)
    fake_npm.install(tmp_path / "fake.tgz")
    cache = tmp_path / "cache"
    fetch_package(NpmPackage("fake", "1.0.0", integrity), cache)

    with pytest.raises(FetchError, match=r"different integrity string.*delete that folder"):
        fetch_package(NpmPackage("fake", "1.0.0", WRONG_INTEGRITY), cache)

    assert len(fake_npm.calls) == 1


def test_incomplete_entry_without_marker_is_replaced(tmp_path: Path, fake_npm: FakeNpm) -> None:
    integrity = make_tarball(tmp_path / "fake.tgz", GOOD_MEMBERS)
    fake_npm.install(tmp_path / "fake.tgz")
    cache = tmp_path / "cache"
    leftover = cache / "npm" / "fake-1.0.0" / "package"
    leftover.mkdir(parents=True)
    (leftover / "half-written.js").write_text("partial", encoding="utf-8")

    folder = fetch_package(NpmPackage("fake", "1.0.0", integrity), cache)

    assert folder == leftover
    assert not (folder / "half-written.js").exists()
    assert (folder / "lib" / "index.js").is_file()
    assert sorted(p.name for p in (cache / "npm").iterdir()) == ["fake-1.0.0"]


def test_concurrent_fetches_end_with_one_complete_entry(tmp_path: Path, fake_npm: FakeNpm) -> None:
    integrity = make_tarball(tmp_path / "fake.tgz", GOOD_MEMBERS)
    fake_npm.install(tmp_path / "fake.tgz", delay=0.5)  # both fetches are in flight together
    package = NpmPackage("fake", "1.0.0", integrity)
    cache = tmp_path / "cache"
    results: list[Path] = []
    errors: list[BaseException] = []

    def fetch() -> None:
        try:
            results.append(fetch_package(package, cache))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert len(fake_npm.calls) == 2
    assert results == [cache / "npm" / "fake-1.0.0" / "package"] * 2
    assert sorted(p.name for p in cache.iterdir()) == ["npm"]
    assert sorted(p.name for p in (cache / "npm").iterdir()) == ["fake-1.0.0"]
    assert sorted(p.relative_to(cache / "npm") for p in all_files(cache / "npm")) == [
        Path("fake-1.0.0"),
        Path("fake-1.0.0/.npm-package.json"),
        Path("fake-1.0.0/package"),
        Path("fake-1.0.0/package/lib"),
        Path("fake-1.0.0/package/lib/index.js"),
        Path("fake-1.0.0/package/package.json"),
    ]
