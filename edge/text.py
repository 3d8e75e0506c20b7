"""Whether what a client sent is text the service can answer."""

from __future__ import annotations

__all__ = ["is_text"]


def is_text(value: object) -> bool:
    """Whether every string in a decoded JSON value, keys included, is Unicode text. JSON's
    ``"\\ud800"`` decodes to a lone surrogate, which can be neither encoded nor answered. The
    walk keeps its own stack: a value nested as deep as the JSON parser allows is checked
    without recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True
