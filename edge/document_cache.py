"""Checked documents kept by their text, so that a document sent again, valid or not, costs a
dictionary look-up instead of being parsed and validated again.

The last :data:`VALIDATION_CACHE_SIZE` valid documents are kept, and the last
:data:`REFUSED_CACHE_SIZE` refused ones with their errors, each cache holding at most
:data:`VALIDATION_CACHE_TOKENS` and :data:`REFUSED_CACHE_TOKENS` tokens of documents (their
parsed form is most of the memory).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from threading import Lock

from graphql import GraphQLSchema

from edge.limits import MAX_CHARACTERS
from edge.validation import Checked, check_document

__all__ = [
    "REFUSED_CACHE_SIZE",
    "REFUSED_CACHE_TOKENS",
    "VALIDATION_CACHE_SIZE",
    "VALIDATION_CACHE_TOKENS",
    "Documents",
]

VALIDATION_CACHE_SIZE = 256
"""Valid documents kept, by query text."""
VALIDATION_CACHE_TOKENS = 64_000
"""Most tokens of the valid documents kept (a parsed token costs about 400 bytes): the memory
of 256 documents of 250 tokens."""
REFUSED_CACHE_SIZE = 64
"""Refused documents kept with their errors, by query text."""
REFUSED_CACHE_TOKENS = 16_000
"""Most tokens of the refused documents kept."""


@dataclass
class _Kept:
    """Checked documents by query text, least recently used first, bounded by their number and
    by their tokens."""

    size: int
    tokens: int
    entries: OrderedDict[str, Checked] = field(default_factory=OrderedDict)
    held: int = 0
    """Tokens of the documents kept."""

    def get(self, query: str) -> Checked | None:
        found = self.entries.get(query)
        if found is not None:
            self.entries.move_to_end(query)
        return found

    def put(self, query: str, checked: Checked) -> None:
        replaced = self.entries.pop(query, None)
        if replaced is not None:
            self.held -= replaced.tokens
        self.entries[query] = checked
        self.held += checked.tokens
        while len(self.entries) > self.size or self.held > self.tokens:
            _, dropped = self.entries.popitem(last=False)
            self.held -= dropped.tokens


@dataclass
class Documents:
    """The cache of checked documents, by query text, for one schema: bounded LRUs of valid
    documents and of refused ones."""

    valid_size: int = VALIDATION_CACHE_SIZE
    refused_size: int = REFUSED_CACHE_SIZE
    valid_tokens: int = VALIDATION_CACHE_TOKENS
    refused_tokens: int = REFUSED_CACHE_TOKENS
    _valid: _Kept = field(init=False)
    _refused: _Kept = field(init=False)
    _lock: Lock = field(default_factory=Lock)

    def __post_init__(self) -> None:
        self._valid = _Kept(self.valid_size, self.valid_tokens)
        self._refused = _Kept(self.refused_size, self.refused_tokens)

    def check(self, schema: GraphQLSchema, query: str) -> Checked:
        if len(query) > MAX_CHARACTERS:  # refused at once, and not kept
            return check_document(schema, query)
        with self._lock:
            found = self._valid.get(query) or self._refused.get(query)
            if found is not None:
                return found
        checked = check_document(schema, query)
        with self._lock:
            (self._refused if checked.errors else self._valid).put(query, checked)
        return checked

    def kept(self) -> tuple[int, int]:
        """How many documents, and how many tokens of them, the caches hold."""
        with self._lock:
            return (
                len(self._valid.entries) + len(self._refused.entries),
                self._valid.held + self._refused.held,
            )

    def clear(self) -> None:
        with self._lock:
            for kept in (self._valid, self._refused):
                kept.entries.clear()
                kept.held = 0
