"""The base of :mod:`edge.parser`'s recursive descent: its state, the locations and names of
nodes, and the grammar of values; and how its nodes are made.

A node is made as graphql-core's dataclass ``__init__`` would leave it, without running it
(that ``__init__`` sets each field through ``object.__setattr__``, the costliest part of
graphql-core's parse): :func:`new_node` makes a bare instance of the node's class and the
parser fills its ``__dict__`` with every field, in the order of the dataclass's fields.
graphql-core 3.3's nodes have no ``__post_init__``, so nothing else is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from graphql import (
    BooleanValueNode,
    EnumValueNode,
    FloatValueNode,
    IntValueNode,
    ListValueNode,
    NameNode,
    Node,
    NullValueNode,
    ObjectFieldNode,
    ObjectValueNode,
    StringValueNode,
    ValueNode,
    VariableNode,
)

from edge.lexer import Lexed, Unsupported, block_string_value, number_value, string_value
from edge.locations import LazyLocation, TokenTable

__all__ = ["ValueParser", "make_node", "new_node"]

_N = TypeVar("_N", bound=Node)

if TYPE_CHECKING:

    def new_node(cls: type[_N]) -> _N:
        """A bare instance of ``cls``: no field set yet."""

else:
    new_node = object.__new__


def make_node(cls: type[_N], fields: dict[str, Any]) -> _N:
    """A node of ``cls`` with ``fields``: every field of its dataclass, in their order."""
    node = new_node(cls)
    node.__dict__.update(fields)
    return node


_NUMBER_START = frozenset("-0123456789")
_FLOAT_MARKS = (".", "e", "E")


class ValueParser:
    """Names, variables and values, for :class:`edge.parser._Parser`. Each method is given the
    index of the token it starts at; any token out of place raises :exc:`Unsupported`."""

    def __init__(self, lexed: Lexed, table: TokenTable, max_nesting: int) -> None:
        self.texts = lexed.texts
        self.starts = lexed.starts
        self.ends = lexed.ends
        self.table = table
        self.depth = 0
        self.max_nesting = max_nesting

    def loc(self, first: int, last: int) -> LazyLocation:
        """The location from token ``first`` to token ``last``, both included."""
        loc = LazyLocation()
        loc.start = self.starts[first]
        loc.end = self.ends[last]
        loc.table = self.table
        return loc

    def enter(self) -> None:
        """One level deeper (the caller takes ``depth`` back when it is done)."""
        self.depth += 1
        if self.depth > self.max_nesting:
            raise Unsupported

    def name(self, i: int) -> NameNode:
        text = self.texts[i]
        if not text.isidentifier():
            raise Unsupported
        loc = LazyLocation()
        loc.start = self.starts[i]
        loc.end = self.ends[i]
        loc.table = self.table
        node = new_node(NameNode)
        fields = node.__dict__
        fields["loc"] = loc
        fields["value"] = text
        return node

    def variable(self, i: int) -> VariableNode:
        """``$name``: two tokens."""
        if self.texts[i] != "$":
            raise Unsupported
        return make_node(VariableNode, {"loc": self.loc(i, i + 1), "name": self.name(i + 1)})

    def value(self, i: int, *, const: bool) -> tuple[ValueNode, int]:
        """A value (``const``: without variables) and the index of the token after it."""
        text = self.texts[i]
        first = text[0]  # IndexError at the end of the document: graphql-core's to report
        if first == '"' or first in _NUMBER_START or text.isidentifier():
            return self.scalar(i, text, first), i + 1
        if text == "$" and not const:
            return self.variable(i), i + 2
        if text == "[":
            return self.list_value(i, const=const)
        if text == "{":
            return self.object_value(i, const=const)
        raise Unsupported

    def scalar(self, i: int, text: str, first: str) -> ValueNode:
        """A value of one token: a string, a number, ``true``, ``false``, ``null`` or an enum
        value."""
        loc = LazyLocation()
        loc.start = self.starts[i]
        loc.end = self.ends[i]
        loc.table = self.table
        node: ValueNode
        if first == '"':
            node = new_node(StringValueNode)
            fields = node.__dict__
            fields["loc"] = loc
            if text.startswith('"""'):
                fields["value"] = block_string_value(text)
                fields["block"] = True
            else:
                fields["value"] = string_value(text) if "\\" in text else text[1:-1]
                fields["block"] = False
            return node
        if first in _NUMBER_START:
            float_ = any(mark in text for mark in _FLOAT_MARKS)
            node = new_node(FloatValueNode if float_ else IntValueNode)
            fields = node.__dict__
            fields["loc"] = loc
            fields["value"] = number_value(text)
            return node
        if text == "true" or text == "false":
            return make_node(BooleanValueNode, {"loc": loc, "value": text == "true"})
        if text == "null":
            return make_node(NullValueNode, {"loc": loc})
        return make_node(EnumValueNode, {"loc": loc, "value": text})

    def list_value(self, i: int, *, const: bool) -> tuple[ListValueNode, int]:
        texts = self.texts
        self.enter()
        values = []
        j = i + 1
        text = texts[j]
        while text != "]":
            first = text[0]
            if first == '"' or first in _NUMBER_START or text.isidentifier():
                values.append(self.scalar(j, text, first))  # most items: without value()
                j += 1
            else:
                value, j = self.value(j, const=const)
                values.append(value)
            text = texts[j]
        self.depth -= 1
        return make_node(ListValueNode, {"loc": self.loc(i, j), "values": tuple(values)}), j + 1

    def object_value(self, i: int, *, const: bool) -> tuple[ObjectValueNode, int]:
        texts = self.texts
        self.enter()
        object_fields = []
        j = i + 1
        while texts[j] != "}":
            name = self.name(j)
            if texts[j + 1] != ":":
                raise Unsupported
            value, k = self.value(j + 2, const=const)
            fields = {"loc": self.loc(j, k - 1), "name": name, "value": value}
            object_fields.append(make_node(ObjectFieldNode, fields))
            j = k
        self.depth -= 1
        fields = {"loc": self.loc(i, j), "fields": tuple(object_fields)}
        return make_node(ObjectValueNode, fields), j + 1
