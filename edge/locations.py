"""The locations :mod:`edge.parser` puts on nodes: graphql-core's ``Location``, whose tokens are
made when first read.

graphql-core's parser makes a ``Token`` of every token and a ``Location`` holding two of them
for every node; most are never read (errors and validation read a location's ``start``,
``end`` and ``source``; ``start_token`` and ``end_token`` serve the line and column of
Apollo's tracing). A :class:`LazyLocation` holds its ``start`` and ``end`` from the parser and
its document's :class:`TokenTable`: the first read of its ``source`` fills that slot from the
table, and the first read of its ``start_token`` or ``end_token`` fills both, making all the
document's tokens (:func:`edge.lexer.tokens`, linked as graphql-core links them) if no location
of the document has yet; every later read finds the slot set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphql import Location, Source, Token, TokenKind

from edge.lexer import tokens

__all__ = ["DocumentLocation", "LazyLocation", "TokenTable"]


class TokenTable:
    """A document's source and, made on first use, its tokens by where they start and end."""

    __slots__ = ("_ending", "_starting", "_tokens", "source")

    def __init__(self, source: Source) -> None:
        self.source = source
        self._tokens: list[Token] = []
        self._starting: dict[int, Token] = {}
        self._ending: dict[int, Token] = {}

    def _made(self) -> list[Token]:
        if not self._tokens:
            made = tokens(self.source.body)
            significant = [token for token in made[1:-1] if token.kind is not TokenKind.COMMENT]
            self._starting = {token.start: token for token in significant}
            self._ending = {token.end: token for token in significant}
            self._tokens = made
        return self._tokens

    def starting_at(self, start: int) -> Token:
        """The token (not a comment) that starts at ``start``."""
        self._made()
        return self._starting[start]

    def ending_at(self, end: int) -> Token:
        """The token (not a comment) that ends at ``end``."""
        self._made()
        return self._ending[end]

    def first(self) -> Token:
        """``<SOF>``."""
        return self._made()[0]

    def last(self) -> Token:
        """``<EOF>``."""
        return self._made()[-1]


class LazyLocation(Location):
    """A node's location: ``start``, ``end`` and ``table`` set by the parser; ``source``,
    ``start_token`` and ``end_token`` looked up in ``table`` when first read (a slot not yet
    set sends the read to ``__getattr__``). Copied or pickled, it is graphql-core's own."""

    __slots__ = ("table",)

    table: TokenTable

    if TYPE_CHECKING:

        def __init__(self) -> None: ...

    else:
        # Called bare, the class runs object's own __new__ and __init__ in C: faster than
        # object.__new__(LazyLocation), which goes through a Python-level wrapper.
        __init__ = object.__init__

    def __getattr__(self, name: str) -> object:
        if name == "source":
            self.source = self.table.source
        elif name in ("start_token", "end_token"):
            self.start_token, self.end_token = self._tokens(self.table)
        else:
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    def _tokens(self, table: TokenTable) -> tuple[Token, Token]:
        return table.starting_at(self.start), table.ending_at(self.end)

    def __reduce__(self) -> tuple[type[Location], tuple[Token, Token, Source]]:
        return Location, (self.start_token, self.end_token, self.source)


class DocumentLocation(LazyLocation):
    """A document's location: from ``<SOF>`` to ``<EOF>``, as graphql-core has it."""

    __slots__ = ()

    def _tokens(self, table: TokenTable) -> tuple[Token, Token]:
        return table.first(), table.last()
