"""Stopping a long-running task that was cancelled, even when the cancellation was lost.

redis-py's asyncio client can return a command's answer normally when the task was
cancelled while the command ran (the CancelledError is swallowed and the task goes on as if
nothing happened). A loop that runs until cancelled, such as the projector's or the change
feed reader's, would then never stop. Such loops call :func:`raise_if_cancelled` once a
round: a task asked to stop (``Task.cancelling()``) stops there.
"""

from __future__ import annotations

import asyncio

__all__ = ["raise_if_cancelled"]


def raise_if_cancelled() -> None:
    """Raise CancelledError if the current task has been asked to stop."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
