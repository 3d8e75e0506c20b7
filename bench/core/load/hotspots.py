"""Where the service spends its CPU: ``py-spy record`` attached to the running process, and a
summary of the samples by function and by package.

``python -m bench.hotspots SAMPLES.txt [--seconds S] [--rate R]`` summarizes a file that
``py-spy record --format raw --nolineno --full-filenames`` wrote (collapsed stacks, one
``frame;frame;... count`` line per distinct stack, outermost frame first).

py-spy samples the process from outside (``--nonblocking``: without pausing it) and leaves out
idle threads, so the samples over ``rate * seconds`` are the share of one core the process
kept busy. A function's *self* share counts the samples where it was the innermost frame; its
*inclusive* share the samples where it was anywhere on the stack.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = [
    "RATE",
    "Hotspot",
    "HotspotReport",
    "category",
    "finish_profile",
    "hotspots_markdown",
    "main",
    "profile_process",
    "summarize",
]

RATE = 100
"""Samples per second."""
_REPO = Path(__file__).resolve().parents[3]
_SERVICE_PACKAGES = ("edge", "gql", "resolvers", "dynamo", "leaderboard", "rankindex")
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*)\)$")
_TOP = 25
_PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("GraphQL parsing and validation (graphql-core)", ("graphql/language/", "graphql/validation/")),
    ("GraphQL execution (graphql-core executor, resolvers included)", ("graphql/execution/",)),
    (
        "DynamoDB client, whole (aiobotocore, botocore, aiohttp's client side)",
        ("aiobotocore/", "botocore/", "aiohttp/client", "aiohttp/connector.py"),
    ),
    (
        "... parameter validation and serialization",
        ("botocore/validate.py", "botocore/serialize.py"),
    ),
    ("... SigV4 signing", ("botocore/auth.py", "botocore/signers.py")),
    (
        "... HTTP exchange with DynamoDB (aiohttp client, socket writes included)",
        ("aiobotocore/httpsession.py", "aiohttp/client", "aiohttp/connector.py"),
    ),
    ("... response parsing", ("botocore/parsers.py", "aiobotocore/parsers.py")),
    ("... event hooks (botocore hooks, incl. the call counter)", ("botocore/hooks.py",)),
    ("Item deserialization (boto3 TypeDeserializer)", ("boto3/dynamodb/types.py",)),
    ("pydantic models", ("pydantic/", "pydantic_core/")),
    ("aiodataloader", ("aiodataloader",)),
    ("Rank index (redis-py)", ("redis/",)),
    ("HTTP server side (aiohttp web_protocol, response writing)", ("aiohttp/web_protocol.py",)),
    ("... writing responses", ("aiohttp/web_response.py",)),
    ("Access log and logging (formatter included)", ("python3.11/logging/",)),
    ("JSON (stdlib json)", ("python3.11/json/",)),
    ("Service code: edge/", ("edge/",)),
    ("Service code: gql/", ("gql/",)),
    ("Service code: resolvers/", ("resolvers/",)),
    ("Service code: dynamo/", ("dynamo/",)),
)
"""Named parts of a request: inclusive share of the samples with a frame in any of the files
(paths as shown, relative to site-packages, the repository or the standard library)."""


@dataclass(frozen=True)
class Hotspot:
    name: str
    """``function (file)`` for a function, or a package name."""
    samples: int
    share: float
    """Of all samples."""


@dataclass(frozen=True)
class HotspotReport:
    samples: int
    seconds: float
    rate: int
    busy_cores: float
    """Samples over rate * seconds: the share of one core the sampled process kept busy."""
    self_by_function: list[Hotspot]
    inclusive_by_function: list[Hotspot]
    self_by_package: list[Hotspot]
    inclusive_by_package: list[Hotspot]
    phases: list[Hotspot] = field(default_factory=list)
    """Inclusive shares of the named parts of a request (see _PHASES)."""
    samples_file: str = ""
    errors: list[str] = field(default_factory=list)


def category(path: str) -> str:
    """The package a source file belongs to: the service's own packages by name (``edge``,
    ``dynamo``, ...), an installed distribution's top-level package (``strawberry``,
    ``graphql``, ``botocore``, ...), ``stdlib:<module>`` for the standard library."""
    if "site-packages/" in path:
        rest = path.split("site-packages/", 1)[1]
        return rest.split("/", 1)[0].removesuffix(".py")
    try:
        relative = Path(path).resolve().relative_to(_REPO)
    except (ValueError, OSError):
        relative = None
    if relative is not None and relative.parts and relative.parts[0] in _SERVICE_PACKAGES:
        return f"service:{relative.parts[0]}"
    found = re.search(r"/lib/python3\.\d+/(?P<module>[^/]+)", path)
    if found:
        return "stdlib:" + found.group("module").removesuffix(".py")
    if path.startswith("<frozen"):
        return "stdlib:" + path.strip("<>").removeprefix("frozen ").split(".")[0]
    return path or "unknown"


def _short(path: str) -> str:
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    try:
        return str(Path(path).resolve().relative_to(_REPO))
    except (ValueError, OSError):
        pass
    found = re.search(r"/lib/(python3\.\d+/.*)$", path)
    return found.group(1) if found else path


def _parse_frame(frame: str) -> tuple[str, str]:
    matched = _FRAME.match(frame)
    if matched is None:
        return frame, ""
    return matched.group("function"), matched.group("file")


def summarize(
    lines: Sequence[str], *, seconds: float, rate: int = RATE, samples_file: str = ""
) -> HotspotReport:
    """Summarize collapsed stacks (``frame;frame;... count``, outermost first)."""
    self_fn: Counter[str] = Counter()
    incl_fn: Counter[str] = Counter()
    self_pkg: Counter[str] = Counter()
    incl_pkg: Counter[str] = Counter()
    phases: Counter[str] = Counter()
    total = 0
    for line in lines:
        line = line.strip()
        if not line:
            continue
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        total += count
        frames = [_parse_frame(f) for f in stack.split(";")]
        names = [f"{fn} ({_short(path)})" for fn, path in frames]
        packages = [category(path) for _, path in frames]
        self_fn[names[-1]] += count
        self_pkg[packages[-1]] += count
        for name in set(names):
            incl_fn[name] += count
        for package in set(packages):
            incl_pkg[package] += count
        paths = {_short(path) for _, path in frames}
        for label, prefixes in _PHASES:
            if any(path.startswith(prefixes) for path in paths):
                phases[label] += count

    def top(counter: Counter[str], n: int = _TOP) -> list[Hotspot]:
        return [Hotspot(k, v, v / total if total else 0.0) for k, v in counter.most_common(n)]

    return HotspotReport(
        samples=total,
        seconds=seconds,
        rate=rate,
        busy_cores=total / (rate * seconds) if seconds else 0.0,
        self_by_function=top(self_fn),
        inclusive_by_function=top(incl_fn, 60),
        self_by_package=top(self_pkg, 30),
        inclusive_by_package=top(incl_pkg, 30),
        phases=[
            Hotspot(label, phases[label], phases[label] / total if total else 0.0)
            for label, _ in _PHASES
        ],
        samples_file=samples_file,
    )


def _py_spy() -> str:
    beside = Path(sys.executable).with_name("py-spy")
    if beside.is_file():
        return str(beside)
    found = shutil.which("py-spy")
    if found is None:
        raise RuntimeError("py-spy is not installed (pip install -c constraints.txt py-spy)")
    return found


def profile_process(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    """Start ``py-spy record`` on ``pid`` for ``seconds``, writing collapsed stacks to ``out``;
    the running recorder (see :func:`finish_profile`)."""
    command = [
        _py_spy(),
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(max(1, round(seconds))),
        "--rate",
        str(RATE),
        "--format",
        "raw",
        "--nolineno",
        "--full-filenames",
        "--nonblocking",
        "--output",
        str(out),
    ]
    return subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def finish_profile(recorder: subprocess.Popen[bytes], out: Path, seconds: float) -> HotspotReport:
    """Wait for the recorder of :func:`profile_process` and summarize what it wrote."""
    output, _ = recorder.communicate(timeout=seconds + 60)
    text = output.decode(errors="replace")
    if recorder.returncode != 0 or not out.is_file():
        raise RuntimeError(f"py-spy failed ({recorder.returncode}): {text[-2000:]}")
    report = summarize(
        out.read_text().splitlines(),
        seconds=max(1, round(seconds)),
        samples_file=out.name,
    )
    errors = [line for line in text.splitlines() if "Errors:" in line]
    return replace(report, errors=errors)


def hotspots_markdown(report: HotspotReport, *, title: str) -> str:
    """The report as Markdown: by package (self and inclusive) and by function."""

    def table(header: str, rows: Sequence[Hotspot]) -> list[str]:
        out = [f"| {header} | share of samples | samples |", "|---|--:|--:|"]
        out += [f"| `{h.name}` | {100 * h.share:.1f}% | {h.samples} |" for h in rows]
        return out

    lines = [
        title,
        "",
        f"{report.samples} samples over {report.seconds:g} s at {report.rate} Hz"
        f" (py-spy, non-blocking, idle threads left out): the service kept"
        f" {report.busy_cores:.2f} cores busy."
        + (f" Samples: `{report.samples_file}` (collapsed stacks)." if report.samples_file else ""),
        "",
        "The parts of a request (inclusive: samples with a frame in that code; parts nest,"
        " so they do not add up):",
        "",
        *table("part", report.phases),
        "",
        "Self time by package (the innermost frame's package):",
        "",
        *table("package", report.self_by_package[:15]),
        "",
        "Inclusive time by package (the package anywhere on the stack):",
        "",
        *table("package", report.inclusive_by_package[:20]),
        "",
        "Self time by function:",
        "",
        *table("function", report.self_by_function[:20]),
        "",
        "Inclusive time by function:",
        "",
        *table("function", report.inclusive_by_function[:40]),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.hotspots",
        description="Summarize py-spy's collapsed stacks (record --format raw --nolineno"
        " --full-filenames) by function and package.",
    )
    parser.add_argument("samples", type=Path)
    parser.add_argument("--seconds", type=float, default=0.0, help="how long it sampled")
    parser.add_argument("--rate", type=int, default=RATE, help="samples per second")
    args = parser.parse_args(argv)
    report = summarize(
        args.samples.read_text().splitlines(),
        seconds=args.seconds,
        rate=args.rate,
        samples_file=args.samples.name,
    )
    print(hotspots_markdown(report, title=f"# Hot spots: {args.samples.name}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
