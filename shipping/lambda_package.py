"""Build the rank-index projector's Lambda package: ``dist/rankindex-lambda.zip``.

``python -m shipping.lambda_package`` (``make lambda-package``) zips, at the archive's root:
the handler ``rankindex/lambda_handler.py``, the project's modules it imports (found by
following its imports, with the Lua scripts of the packages they are in), and the
third-party distributions those modules import, installed with ``pip --target`` at the
versions pinned in constraints.txt as wheels for Lambda's Python 3.11 on Linux
(``--platform``, default x86_64; aiohttp and pydantic carry compiled parts). boto3 and
botocore are left out: the Lambda runtime provides them. Nothing else goes in: no tests, no
GraphQL layer, no scripts, no bytecode.
"""

from __future__ import annotations

import argparse
import modulefinder
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "HANDLER",
    "PROVIDED_BY_LAMBDA",
    "REQUIREMENTS",
    "build",
    "first_party_modules",
    "main",
]

ROOT = Path(__file__).resolve().parents[1]
HANDLER = "rankindex.lambda_handler"
REQUIREMENTS = ("aiohttp", "pydantic", "redis")
"""The distributions the handler's modules import (with their own dependencies)."""
PROVIDED_BY_LAMBDA = frozenset({"boto3", "botocore"})
"""Top-level packages the Lambda Python runtime already has."""
_TYPING_ONLY_PREFIX = "types_"
_DEFAULT_PLATFORM = "manylinux2014_x86_64"
_PIP_TIMEOUT_SECONDS = 600.0


class PackageError(RuntimeError):
    """The package cannot be built as described."""


def first_party_modules(root: Path = ROOT) -> tuple[list[Path], set[str]]:
    """The project's source files the handler needs, and the other top-level names they
    import (the standard library left out)."""
    finder = modulefinder.ModuleFinder(path=[str(root)])
    finder.import_hook(HANDLER)
    found = (getattr(module, "__file__", None) for module in finder.modules.values())
    files = sorted(Path(name) for name in found if name and Path(name).is_relative_to(root))
    others = {name.split(".")[0] for name in finder.badmodules}
    return files, others - set(sys.stdlib_module_names)


def build(
    output: Path, *, platform: str = _DEFAULT_PLATFORM, constraints: Path | None = None
) -> list[str]:
    """Write the zip to ``output`` and return the names of its top-level entries."""
    files, imported = first_party_modules()
    outside = {
        name
        for name in imported
        if name not in PROVIDED_BY_LAMBDA and not name.startswith(_TYPING_ONLY_PREFIX)
    }
    with tempfile.TemporaryDirectory(prefix="rankindex-lambda.") as scratch:
        tree = Path(scratch)
        _install(tree, platform, constraints or ROOT / "constraints.txt")
        shutil.rmtree(tree / "bin", ignore_errors=True)
        missing = sorted(name for name in outside if not _importable(tree, name))
        if missing:
            raise PackageError(
                f"the handler's modules import {', '.join(missing)}, which none of "
                f"{', '.join(REQUIREMENTS)} installs: add its distribution to REQUIREMENTS"
            )
        for source in files + _lua_scripts(files):
            target = tree / source.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        _zip(tree, output)
        return sorted(path.name for path in tree.iterdir())


def _install(tree: Path, platform: str, constraints: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--target",
        str(tree),
        "--constraint",
        str(constraints),
        "--only-binary=:all:",
        "--platform",
        platform,
        "--implementation",
        "cp",
        "--python-version",
        "3.11",
        *REQUIREMENTS,
    ]
    try:
        subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=True,
            timeout=_PIP_TIMEOUT_SECONDS,
        )
    except subprocess.CalledProcessError as exc:
        raise PackageError(
            f"pip could not install {', '.join(REQUIREMENTS)}:\n{exc.stderr}"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise PackageError(f"pip did not finish within {_PIP_TIMEOUT_SECONDS:.0f} s") from exc


def _importable(tree: Path, name: str) -> bool:
    return (tree / name / "__init__.py").is_file() or (tree / f"{name}.py").is_file()


def _lua_scripts(files: Iterable[Path]) -> list[Path]:
    folders = {path.parent for path in files}
    return sorted(script for folder in folders for script in folder.glob("*.lua"))


def _zip(tree: Path, output: Path) -> None:
    """Zip ``tree`` into ``output`` with sorted entries, written beside it and renamed."""
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(tree.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(tree).as_posix())
    partial.replace(output)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shipping.lambda_package",
        description="Build the rank-index projector's Lambda package.",
    )
    parser.add_argument("--output", type=Path, default=ROOT / "dist" / "rankindex-lambda.zip")
    parser.add_argument(
        "--platform",
        default=_DEFAULT_PLATFORM,
        help=f"wheel platform of the Lambda's architecture (default {_DEFAULT_PLATFORM}; "
        "manylinux2014_aarch64 for arm64)",
    )
    args = parser.parse_args(argv)
    try:
        entries = build(args.output, platform=args.platform)
    except PackageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.output}: {', '.join(entries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
