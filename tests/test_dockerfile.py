"""What docs/how-to/install-elsewhere.md promises of the container image, read from the Dockerfile's
runtime stage (no container engine runs the tests; `make lint-docker` checks the file with
hadolint)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments out."""
    logical: list[str] = []
    pending = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip().removesuffix("\\") + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            logical.append(pending.strip())
            pending = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1]) for text in logical]


def _runtime_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (name, _) in enumerate(instructions) if name == "FROM")
    return instructions[last_from:]


def test_both_stages_are_python_3_11_slim_by_tag() -> None:
    bases = [args.split()[0] for name, args in _instructions() if name == "FROM"]
    assert bases == ["python:3.11-slim", "python:3.11-slim"]


def test_the_runtime_stage_runs_serve_on_8080_as_a_non_root_user() -> None:
    stage = dict(_runtime_stage())
    assert json.loads(stage["CMD"]) == [
        "leaderboard",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "8080",
    ]
    assert stage["EXPOSE"] == "8080"
    assert stage["USER"].split(":")[0] not in ("0", "root")
    # Only the installed virtual environment comes from the builder; nothing is installed
    # in the runtime stage itself.
    copies = [args for name, args in _runtime_stage() if name == "COPY"]
    assert copies == ["--from=builder /opt/venv /opt/venv"]
    runs = " ".join(args for name, args in _runtime_stage() if name == "RUN")
    assert "apt-get" not in runs
    assert "pip" not in runs


def test_the_health_check_asks_livez_with_the_standard_library() -> None:
    check = dict(_runtime_stage())["HEALTHCHECK"]
    options, _, command = check.partition(" CMD ")
    program = json.loads(command)
    assert program[:2] == ["python", "-c"]
    assert "urllib.request" in program[2]
    assert "http://127.0.0.1:8080/livez" in program[2]
    assert shlex.split(options) == [
        "--interval=30s",
        "--timeout=5s",
        "--start-period=30s",
        "--retries=3",
    ]
