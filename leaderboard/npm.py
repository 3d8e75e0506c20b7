"""Fetch pinned npm packages into a local cache folder, verified by their sha512 integrity.

A package is downloaded with ``npm pack``, its tarball hashed and compared with the pinned
integrity string before anything is unpacked, then extracted next to the cache and moved into
place with one atomic rename, so readers only ever see a complete tree.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FetchError", "NpmPackage", "fetch_package", "package_root"]

_MARKER_NAME = ".npm-package.json"
_NPM_TIMEOUT_SECONDS = 600.0
_CHUNK_SIZE = 1 << 20
_NAME_RE = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
_VERSION_RE = re.compile(
    r"^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$"
)


class FetchError(RuntimeError):
    """A pinned npm package could not be fetched, verified or unpacked."""


@dataclass(frozen=True)
class NpmPackage:
    """An npm package pinned to an exact version and its registry integrity string."""

    name: str
    version: str
    integrity: str  # the registry's "sha512-<base64>" string

    @property
    def spec(self) -> str:
        """The ``name@version`` form understood by npm."""
        return f"{self.name}@{self.version}"


def package_root(package: NpmPackage, cache_dir: Path) -> Path:
    """Return the cache folder that holds (or will hold) ``package/`` of ``package``."""
    return cache_dir / "npm" / f"{package.name.replace('/', '+')}-{package.version}"


def fetch_package(package: NpmPackage, cache_dir: Path) -> Path:
    """Make sure ``package`` is unpacked under ``cache_dir`` and return its ``package/`` folder.

    Returns at once when a previous call completed. Otherwise the tarball is fetched with
    ``npm pack``, checked against ``package.integrity`` and only then unpacked. Every failure
    raises :class:`FetchError` and leaves no partial tree behind.
    """
    _validate(package)
    cache_dir = cache_dir.absolute()
    root = package_root(package, cache_dir)
    if _is_complete(root, package):
        return root / "package"

    npm = shutil.which("npm")
    if npm is None:
        raise FetchError(
            f"cannot fetch {package.spec}: the `npm` command was not found on PATH. "
            "Install Node.js with npm (e.g. `apt-get install npm`) or add it to PATH, then retry."
        )

    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{root.name}.", suffix=".tmp", dir=cache_dir))
    except OSError as exc:
        raise FetchError(
            f"cannot create a working folder in {cache_dir}: {exc}. "
            "Make sure the cache folder is writable or point it elsewhere."
        ) from exc

    try:
        tarball = _pack(npm, package, staging / "tarball")
        _verify_integrity(package, tarball)
        tree = staging / "tree"
        _extract(package, tarball, tree)
        _write_marker(tree, package)
        return _move_into_place(package, tree, root) / "package"
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _validate(package: NpmPackage) -> None:
    if not _NAME_RE.fullmatch(package.name):
        raise FetchError(f"{package.name!r} is not a valid npm package name; fix the pin.")
    if not _VERSION_RE.fullmatch(package.version):
        raise FetchError(
            f"{package.version!r} is not an exact version of {package.name}; "
            "pin one exact version such as 1.2.3."
        )
    _expected_digests(package)


def _expected_digests(package: NpmPackage) -> list[bytes]:
    """Decode every ``sha512-`` entry of the integrity string (space-separated SRI list)."""
    digests: list[bytes] = []
    for entry in package.integrity.split():
        algorithm, _, encoded = entry.partition("-")
        if algorithm != "sha512":
            continue
        try:
            digest = base64.b64decode(encoded.split("?", 1)[0], validate=True)
        except (binascii.Error, ValueError):
            digest = b""
        if len(digest) != hashlib.sha512().digest_size:
            raise FetchError(
                f"the integrity string of {package.spec} is malformed ({entry!r}); copy it again "
                f"from `npm view {package.spec} dist.integrity`."
            )
        digests.append(digest)
    if not digests:
        raise FetchError(
            f"the integrity string of {package.spec} has no sha512 entry; pin the value printed "
            f"by `npm view {package.spec} dist.integrity`."
        )
    return digests


def _is_complete(root: Path, package: NpmPackage) -> bool:
    marker = root / _MARKER_NAME
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as exc:
        raise FetchError(
            f"the cache entry {root} is unreadable ({exc}); delete that folder and retry."
        ) from exc
    if not isinstance(recorded, dict) or recorded.get("integrity") != package.integrity:
        raise FetchError(
            f"the cache entry {root} was verified against a different integrity string than "
            f"the one pinned for {package.spec}; delete that folder and retry."
        )
    return True


def _pack(npm: str, package: NpmPackage, destination: Path) -> Path:
    destination.mkdir()
    command = [npm, "pack", package.spec, "--json", "--pack-destination", str(destination)]
    env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
    try:
        result = subprocess.run(
            command,
            cwd=destination,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_NPM_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise FetchError(
            f"`npm pack {package.spec}` did not finish within {_NPM_TIMEOUT_SECONDS:.0f} s; "
            "check that the npm registry is reachable and retry."
        ) from exc
    except OSError as exc:
        raise FetchError(
            f"could not run {npm}: {exc}; check the npm installation and retry."
        ) from exc
    if result.returncode != 0:
        details = _tail(result.stderr) or _tail(result.stdout) or "(no output)"
        raise FetchError(
            f"`npm pack {package.spec}` failed with exit code {result.returncode}; check that "
            f"the npm registry is reachable and that this version exists. npm said:\n{details}"
        )
    tarballs = sorted(destination.glob("*.tgz"))
    if len(tarballs) != 1:
        raise FetchError(
            f"`npm pack {package.spec}` produced {len(tarballs)} tarballs instead of one; "
            "check the npm installation and retry."
        )
    return tarballs[0]


def _verify_integrity(package: NpmPackage, tarball: Path) -> None:
    digest = hashlib.sha512()
    with tarball.open("rb") as stream:
        while chunk := stream.read(_CHUNK_SIZE):
            digest.update(chunk)
    actual = digest.digest()
    if not any(hmac.compare_digest(actual, wanted) for wanted in _expected_digests(package)):
        got = "sha512-" + base64.b64encode(actual).decode("ascii")
        raise FetchError(
            f"integrity check failed for {package.spec}: expected {package.integrity}, "
            f"got {got}. The download was discarded; compare the pin with "
            f"`npm view {package.spec} dist.integrity` and fix whichever is wrong."
        )


def _extract(package: NpmPackage, tarball: Path, tree: Path) -> None:
    tree.mkdir()
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            archive.extractall(tree, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise FetchError(
            f"could not unpack the tarball of {package.spec}: {exc}. "
            "Nothing was cached; retry, and report the package if it keeps failing."
        ) from exc
    if not (tree / "package").is_dir():
        raise FetchError(
            f"the tarball of {package.spec} has no top-level package/ folder, "
            "so it cannot be used from the cache; pin a different package or version."
        )


def _write_marker(tree: Path, package: NpmPackage) -> None:
    record = {"name": package.name, "version": package.version, "integrity": package.integrity}
    with (tree / _MARKER_NAME).open("w", encoding="utf-8") as stream:
        json.dump(record, stream)
        stream.write("\n")
        stream.flush()
        os.fsync(stream.fileno())


def _move_into_place(package: NpmPackage, tree: Path, root: Path) -> Path:
    """Rename the finished ``tree`` to ``root``; a complete tree already there wins."""
    root.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            tree.rename(root)
        except OSError as exc:
            if _is_complete(root, package):
                return root  # another process finished first; ours is discarded by the caller
            if not root.exists():
                raise FetchError(
                    f"could not move {package.spec} into {root}: {exc}; "
                    "make sure the cache folder is writable and retry."
                ) from exc
            _discard_incomplete(root)
        else:
            return root
    raise FetchError(
        f"could not move {package.spec} into {root} because the folder keeps reappearing "
        "without being complete; delete it and retry."
    )


def _discard_incomplete(root: Path) -> None:
    """Move an incomplete entry (one without its marker) aside and delete it."""
    trash = Path(tempfile.mkdtemp(prefix=f".{root.name}.", suffix=".trash", dir=root.parent))
    try:
        root.rename(trash / "old")
    except FileNotFoundError:
        pass  # another process removed or replaced it meanwhile
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
