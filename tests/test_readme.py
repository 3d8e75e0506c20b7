"""Every GraphQL example in the README runs, in order, against a service with demo data."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from leaderboard.seed import seed
from tests.conftest import ADMIN_KEYS, Api

README = Path(__file__).resolve().parent.parent / "README.md"


def _examples() -> list[str]:
    return re.findall(r"```graphql\n(.*?)```", README.read_text(), flags=re.S)


def _payload_errors(data: Any) -> list[Any]:
    """Every `errors` list of a mutation payload anywhere in the response."""
    found: list[Any] = []
    if isinstance(data, dict):
        for key, value in data.items():
            found += (
                value if key == "errors" and isinstance(value, list) else _payload_errors(value)
            )
    elif isinstance(data, list):
        for value in data:
            found += _payload_errors(value)
    return found


async def test_readme_examples_run_without_errors(api: Api) -> None:
    await seed(api.db, 5, progress=False)
    examples = _examples()
    assert len(examples) >= 5
    for example in examples:
        # A block may hold a query and a mutation; each operation is sent on its own.
        for operation in re.split(r"\n(?=mutation|query|\{)", example.strip()):
            # An admin key may run every example (moderation too).
            body = await api.raw(operation, key=ADMIN_KEYS[0])
            assert "errors" not in body, (operation, body["errors"])
            assert _payload_errors(body["data"]) == [], (operation, body["data"])
