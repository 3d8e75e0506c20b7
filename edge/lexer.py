"""The lexer of :mod:`edge.parser`: an executable document's tokens in one regular expression.

graphql-core's lexer reads a document a character at a time in Python and makes a ``Token`` of
each token as it goes. :func:`lex` splits the document with one compiled pattern
(:data:`_SPLIT`, in C) into flat lists of token texts and offsets; graphql-core's ``Token``
objects are made by :func:`tokens` only when something asks a node's location for them
(:mod:`edge.locations`).

The pattern's grammar is graphql-core's for every token an executable document uses:
punctuators, the spread, names, numbers, strings with their escapes, block strings, comments,
and the ignored white space, commas and byte order marks between them. What it leaves out (the
``&`` and ``|`` punctuators, any character graphql-core refuses, a malformed number, string or
escape) is left between tokens, where only ignored characters may be: :func:`lex` then returns
``None`` and the parser hands the document to graphql-core, whose error it is. So does a
document with a surrogate code unit anywhere (graphql-core reads a pair of them as one
character), and a token whose value graphql-core refuses (:exc:`Unsupported`, from the
``*_value`` functions).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, pairwise
from operator import itemgetter

from graphql import Token, TokenKind
from graphql.language.block_string import dedent_block_string_lines

__all__ = [
    "Lexed",
    "Unsupported",
    "block_string_value",
    "lex",
    "number_value",
    "string_value",
    "tokens",
]


class Unsupported(Exception):
    """The fast path does not take this document: graphql-core parses it instead."""


_NUMBER = r"[0-9]++(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?(?![._0-9A-Za-z])"
"""An IntValue or FloatValue without its sign, not followed by a digit, ``.`` or a name start.
A leading zero (``01``, graphql-core's error) is left to :func:`number_value`."""

_ESCAPE_SEQUENCE = r'\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4}|u\{[0-9A-Fa-f]{1,8}\})'
_STRING = rf'"(?!"")[^"\\\n\r]*+(?:{_ESCAPE_SEQUENCE}[^"\\\n\r]*+)*+"'
"""A string on one line; three quotes begin a block string instead."""

_BLOCK_STRING = r'"""[^"\\]*+(?:(?:"(?!"")|\\(?!""")|\\""")[^"\\]*+)*+"""'
"""A block string: anything up to the first three quotes that no backslash escapes."""

_TOKEN = (
    rf"[_A-Za-z][_0-9A-Za-z]*+|[!$():=@\[\]{{}}]|{_STRING}|{_NUMBER}|-{_NUMBER}|\.\.\."
    rf"|{_BLOCK_STRING}|#[^\n\r]*+"
)
"""Every token, comments included, the most frequent first. Each alternative begins with a
literal or a character set, so that the regular expression engine skips the text between
tokens quickly, and every quantifier is possessive, so that nothing is matched twice. (A
string's ``(?!"")`` leaves three quotes to the block string.)"""

_SPLIT = re.compile(f"({_TOKEN})")
"""Splits a document into the text between tokens and the tokens: where no token can begin,
the character is left between them."""

_IGNORED = "\t\n\r ,\ufeff"
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NEWLINE = re.compile(r"\r\n|[\n\r]")
_LEADING_ZERO = re.compile(r"-?0[0-9]")
_ESCAPE = re.compile(r'\\(?:u\{([0-9A-Fa-f]{1,8})\}|u([0-9A-Fa-f]{4})|(["\\/bfnrt]))')
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

_PUNCTUATORS = {
    "!": TokenKind.BANG,
    "$": TokenKind.DOLLAR,
    "(": TokenKind.PAREN_L,
    ")": TokenKind.PAREN_R,
    ":": TokenKind.COLON,
    "=": TokenKind.EQUALS,
    "@": TokenKind.AT,
    "[": TokenKind.BRACKET_L,
    "]": TokenKind.BRACKET_R,
    "{": TokenKind.BRACE_L,
    "}": TokenKind.BRACE_R,
    "...": TokenKind.SPREAD,
}


@dataclass(frozen=True, slots=True)
class Lexed:
    """A document's tokens other than comments, then an empty text at the end of the document
    (``texts``, ``starts``, ``ends``), and how many tokens graphql-core's ``max_tokens`` counts
    in it (``count``: comments included, the end not).

    A name is the one kind of token whose text is an identifier (``str.isidentifier``): the
    others begin with a quote, a digit, ``-`` or a punctuator, and no non-ASCII letter begins a
    token here."""

    texts: list[str]
    starts: list[int]
    ends: list[int]
    count: int


def lex(body: str) -> Lexed | None:
    """The tokens of ``body``, or ``None`` when it has one outside the fast path's grammar."""
    if not body.isascii() and _SURROGATE.search(body):
        return None
    pieces = _SPLIT.split(body)
    if "".join(pieces[0::2]).strip(_IGNORED):
        return None
    offsets = list(accumulate(map(len, pieces)))
    texts = pieces[1::2]
    starts = offsets[0::2]  # each token's, then the end of the document's
    ends = offsets[1::2]
    count = len(texts)
    if "#" in body:
        _drop_comments(texts, starts, ends)
    texts.append("")
    return Lexed(texts, starts, ends, count)


def _drop_comments(texts: list[str], starts: list[int], ends: list[int]) -> None:
    firsts = list(map(itemgetter(0), texts))
    found: list[int] = []
    for _ in range(firsts.count("#")):
        found.append(firsts.index("#", found[-1] + 1 if found else 0))
    for k in reversed(found):
        del texts[k], starts[k], ends[k]


def number_value(text: str) -> str:
    """A number token's value: its text, unless a zero begins a longer integer part
    (graphql-core's error, :exc:`Unsupported`)."""
    if _LEADING_ZERO.match(text):
        raise Unsupported
    return text


def _unescape(match: re.Match[str]) -> str:
    wide, fixed, char = match.groups()
    if char is not None:
        return _ESCAPED[char]
    point = int(wide or fixed, 16)
    if wide is not None and (0xD800 <= point <= 0xDFFF or point > 0x10FFFF):
        raise Unsupported
    return chr(point)


def string_value(text: str) -> str:
    """A string token's value, its escapes decoded as graphql-core decodes them: an escaped
    surrogate pair is one character; any other escaped surrogate is graphql-core's error
    (:exc:`Unsupported`)."""
    value = text[1:-1]
    if "\\" not in value:
        return value
    value = _ESCAPE.sub(_unescape, value)
    if _SURROGATE.search(value):
        try:
            value = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            raise Unsupported from None
    return value


def block_string_value(text: str) -> str:
    r"""A block string token's value, as graphql-core's lexer makes it: ``\"""`` unescaped, then
    the lines' common indentation and the blank first and last lines removed."""
    lines = _NEWLINE.split(text[3:-3].replace('\\"""', '"""'))
    return "\n".join(dedent_block_string_lines(lines))


def _token(text: str, start: int, line: int, column: int) -> Token:
    end = start + len(text)
    kind = _PUNCTUATORS.get(text)
    if kind is not None:
        return Token(kind, start, end, line, column)
    if text.startswith("#"):
        return Token(TokenKind.COMMENT, start, end, line, column, text[1:])
    if text.startswith('"""'):
        return Token(TokenKind.BLOCK_STRING, start, end, line, column, block_string_value(text))
    if text.startswith('"'):
        return Token(TokenKind.STRING, start, end, line, column, string_value(text))
    if text.isidentifier():
        return Token(TokenKind.NAME, start, end, line, column, text)
    kind = TokenKind.FLOAT if any(mark in text for mark in ".eE") else TokenKind.INT
    return Token(kind, start, end, line, column, text)


def tokens(body: str) -> list[Token]:
    """All the tokens of a document :func:`lex` took, as graphql-core's lexer makes them: from
    ``<SOF>`` to ``<EOF>``, comments included, each linked to the one before and after it, with
    its line and column (``\\r\\n``, ``\\n`` and ``\\r`` each end a line)."""
    line_starts = [match.end() for match in _NEWLINE.finditer(body)]

    def line_and_column(start: int) -> tuple[int, int]:
        line = bisect_right(line_starts, start)
        return line + 1, start + 1 - (line_starts[line - 1] if line else 0)

    made = [Token(TokenKind.SOF, 0, 0, 0, 0)]
    position = 0
    for k, piece in enumerate(_SPLIT.split(body)):
        if k % 2:
            made.append(_token(piece, position, *line_and_column(position)))
        position += len(piece)
    made.append(Token(TokenKind.EOF, position, position, *line_and_column(position)))
    for before, after in pairwise(made):
        before.next = after
        after.prev = before
    return made
