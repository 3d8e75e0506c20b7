"""The benchmarks and the soak run use the product's public names only (the import contract
of `make lint` holds the product's own layers)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("dynamo", "gql", "edge", "resolvers", "rankindex", "leaderboard")


def _private_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    product_modules: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] not in PRODUCT:
                continue
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(
                        f"{path.name}:{node.lineno} from {node.module} import {alias.name}"
                    )
                elif alias.name.islower():
                    product_modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PRODUCT:
                    product_modules[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in product_modules
        ):
            found.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def test_bench_and_soak_use_only_public_names_of_the_product() -> None:
    uses = [
        use
        for folder in ("bench", "soak")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for use in _private_uses(path)
    ]
    assert uses == []
