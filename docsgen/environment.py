"""Rendering under a known environment: the defaults the reference shows are those of a process
whose environment sets none of the service's variables, whatever the environment of the
process that renders them."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["PREFIXES", "unset_service_variables"]

PREFIXES = ("LEADERBOARD_", "AWS_", "PROMETHEUS_")
"""The prefixes of the variables the service reads."""


@contextlib.contextmanager
def unset_service_variables() -> Iterator[None]:
    """The service's variables unset for the block, and restored after it."""
    saved = {name: value for name, value in os.environ.items() if name.startswith(PREFIXES)}
    for name in saved:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(saved)
