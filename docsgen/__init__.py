"""The documentation's machinery, outside the service's layers: the reference pages under
docs/reference/, generated from the code (``python -m docsgen``), and the GraphQL examples of
the pages, which the tests check (:mod:`docsgen.examples`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["REFERENCE", "ROOT", "render_reference"]

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path("docs") / "reference"
"""Where the generated pages go, from the repository's root."""


def render_reference() -> dict[Path, str]:
    """Every generated reference page's text, by its path from the repository's root."""
    from docsgen.cli import render_cli
    from docsgen.errors import render_errors
    from docsgen.limits import render_limits
    from docsgen.metrics import render_metrics
    from docsgen.schema import render_schema
    from docsgen.settings import render_settings
    from edge.schema import GRAPHQL_SCHEMA

    pages: dict[str, Callable[[], str]] = {
        "schema.md": lambda: render_schema(GRAPHQL_SCHEMA),
        "errors.md": lambda: render_errors(GRAPHQL_SCHEMA),
        "limits.md": render_limits,
        "settings.md": render_settings,
        "cli.md": render_cli,
        "metrics.md": render_metrics,
    }
    return {REFERENCE / name: render() for name, render in pages.items()}
