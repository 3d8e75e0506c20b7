"""A parser for executable GraphQL documents that returns graphql-core's AST, node for node, in
a fifth to a third of graphql-core's time.

Why: the service parses every document it has not seen before, up to the limits of
:mod:`edge.validation` (1,000 tokens, 12,000 characters), and graphql-core 3.3's ``parse`` takes
about 16 ms for 1,000 tokens: its lexer reads a character at a time in Python, it makes a
``Token`` of every token, and every node is a frozen dataclass whose ``__init__`` sets each
field through ``object.__setattr__``. Here the lexer is one regular expression
(:mod:`edge.lexer`), the parser a recursive descent over its flat lists of token texts and
offsets, each node is made as its ``__init__`` would leave it (the same class, the same
``__dict__``) without running it, and tokens are made only if a location's are read
(:mod:`edge.locations`).

What it guarantees: :func:`parse_document` returns what ``graphql.parse(query,
max_tokens=max_tokens)`` returns, or raises what it raises. A document in its grammar (the
operations and fragments of an executable document, without descriptions, within
``max_tokens``, nested at most :data:`MAX_FAST_NESTING` deep) it parses itself: the same node
classes, the same attribute values (tuples and ``None`` where graphql-core has them, strings
decoded as graphql-core decodes them, ``block`` on strings), the same ``token_count`` (comments
included), and on every node a location with the same ``start``, ``end``, ``source``,
``start_token`` and ``end_token`` (one location object serves a field of one name and its
name, or a named type and its name: their spans are the same). Anything else (type-system
definitions, descriptions, any syntax error, too many tokens) it hands to graphql-core, so that
errors, their messages and their positions are graphql-core's own. :data:`STATS` counts the
documents each way took.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import (
    ArgumentNode,
    DirectiveNode,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    ListTypeNode,
    NamedTypeNode,
    NameNode,
    NonNullTypeNode,
    OperationDefinitionNode,
    OperationType,
    SelectionNode,
    SelectionSetNode,
    Source,
    TypeNode,
    VariableDefinitionNode,
    parse,
)

from edge.lexer import Lexed, Unsupported, lex
from edge.locations import DocumentLocation, LazyLocation, TokenTable
from edge.value_parser import ValueParser, make_node, new_node

__all__ = ["MAX_FAST_NESTING", "STATS", "ParseStats", "parse_document"]

MAX_FAST_NESTING = 32
"""Deepest nesting of selection sets, list and object values and list types (counted together,
as graphql-core counts them) that the fast path parses. graphql-core refuses documents nested
more than 200 deep, or less deep when the interpreter's stack runs out first: deeper documents
than this go to graphql-core, so that it alone decides."""


@dataclass
class ParseStats:
    """How many documents each way parsed."""

    fast: int = 0
    fallback: int = 0


STATS = ParseStats()


_OPERATIONS = {
    "query": OperationType.QUERY,
    "mutation": OperationType.MUTATION,
    "subscription": OperationType.SUBSCRIPTION,
}
_FIELD_PARTS = frozenset(":(@{")
"""The tokens that may follow a field's first name when the field has more than a name."""

_LEAF_FIELD: dict[str, Any] = {
    "loc": None,
    "directives": None,
    "name": None,
    "alias": None,
    "arguments": None,
    "selection_set": None,
}
"""A field's ``__dict__`` as ``FieldNode.__init__`` fills it, before its name and location."""


def parse_document(query: str, *, max_tokens: int) -> DocumentNode:
    """``graphql.parse(query, max_tokens=max_tokens)``: the same AST, or the same error."""
    lexed = lex(query)
    if lexed is not None and lexed.count <= max_tokens:
        try:
            document = _Parser(lexed, TokenTable(Source(query)), MAX_FAST_NESTING).document()
        except (Unsupported, RecursionError, IndexError):
            # Not in the fast path's grammar (IndexError: the document ends where a token is
            # read past its last). graphql-core's parse, outside this block so as not to hold
            # the frames of a RecursionError, says why.
            pass
        else:
            STATS.fast += 1
            return document
    STATS.fallback += 1
    return parse(query, max_tokens=max_tokens)


class _Parser(ValueParser):
    """The grammar of definitions, selections, directives and types, over
    :class:`ValueParser`'s names and values. Each method is given the index of the token it
    starts at and returns its node with the index of the token after it."""

    def __init__(self, lexed: Lexed, table: TokenTable, max_nesting: int) -> None:
        super().__init__(lexed, table, max_nesting)
        self.count = lexed.count
        self.length = lexed.starts[-1]

    def document(self) -> DocumentNode:
        texts = self.texts
        definitions = []
        i = 0
        while texts[i]:
            definition, i = self.definition(i)
            definitions.append(definition)
        if not definitions:
            raise Unsupported
        loc = DocumentLocation()
        loc.start = 0
        loc.end = self.length
        loc.table = self.table
        fields = {"loc": loc, "definitions": tuple(definitions), "token_count": self.count}
        return make_node(DocumentNode, fields)

    def definition(self, i: int) -> tuple[OperationDefinitionNode | FragmentDefinitionNode, int]:
        text = self.texts[i]
        if text == "{":
            return self.operation(i, OperationType.QUERY, shorthand=True)
        operation = _OPERATIONS.get(text)
        if operation is not None:
            return self.operation(i, operation, shorthand=False)
        if text == "fragment":
            return self.fragment_definition(i)
        raise Unsupported

    def operation(
        self, i: int, operation: OperationType, *, shorthand: bool
    ) -> tuple[OperationDefinitionNode, int]:
        texts = self.texts
        name = variable_definitions = directives = None
        j = i if shorthand else i + 1
        if not shorthand:
            if texts[j].isidentifier():
                name = self.name(j)
                j += 1
            if texts[j] == "(":
                variable_definitions, j = self.variable_definitions(j)
            directives, j = self.directives(j, const=False)
        selection_set, j = self.selection_set(j)
        fields = {
            "loc": self.loc(i, j - 1),
            "selection_set": selection_set,
            "description": None,
            "name": name,
            "variable_definitions": variable_definitions,
            "directives": directives,
            "operation": operation,
        }
        return make_node(OperationDefinitionNode, fields), j

    def variable_definitions(self, i: int) -> tuple[tuple[VariableDefinitionNode, ...], int]:
        texts = self.texts
        definitions = []
        j = i + 1
        while True:
            variable = self.variable(j)
            if texts[j + 2] != ":":
                raise Unsupported
            type_, k = self.type_reference(j + 3)
            default_value = None
            if texts[k] == "=":
                default_value, k = self.value(k + 1, const=True)
            directives, k = self.directives(k, const=True)
            fields = {
                "loc": self.loc(j, k - 1),
                "description": None,
                "variable": variable,
                "type": type_,
                "default_value": default_value,
                "directives": directives,
            }
            definitions.append(make_node(VariableDefinitionNode, fields))
            j = k
            if texts[j] == ")":
                return tuple(definitions), j + 1

    def type_reference(self, i: int) -> tuple[TypeNode, int]:
        texts = self.texts
        type_: TypeNode
        if texts[i] == "[":
            self.enter()
            inner, j = self.type_reference(i + 1)
            self.depth -= 1
            if texts[j] != "]":
                raise Unsupported
            type_ = make_node(ListTypeNode, {"loc": self.loc(i, j), "type": inner})
        else:
            type_ = self.named_type(i)
            j = i
        if texts[j + 1] == "!":
            return make_node(NonNullTypeNode, {"loc": self.loc(i, j + 1), "type": type_}), j + 2
        return type_, j + 1

    def named_type(self, i: int) -> NamedTypeNode:
        name = self.name(i)
        return make_node(NamedTypeNode, {"loc": name.loc, "name": name})

    def selection_set(self, i: int) -> tuple[SelectionSetNode, int]:
        texts = self.texts
        if texts[i] != "{":
            raise Unsupported
        self.enter()
        starts, ends, table = self.starts, self.ends, self.table
        selections: list[SelectionNode] = []
        append = selections.append
        j = i + 1
        text = texts[j]
        while text != "}":
            if text == "...":
                fragment, j = self.fragment(j)
                append(fragment)
            elif texts[j + 1] in _FIELD_PARTS:
                field, j = self.field(j)
                append(field)
            elif text.isidentifier():
                # A field of one name, most of a document's fields, made here; it and its
                # name share one location.
                loc = LazyLocation()
                loc.start = starts[j]
                loc.end = ends[j]
                loc.table = table
                name = new_node(NameNode)
                fields = name.__dict__
                fields["loc"] = loc
                fields["value"] = text
                leaf = new_node(FieldNode)
                fields = leaf.__dict__
                fields.update(_LEAF_FIELD)
                fields["loc"] = loc
                fields["name"] = name
                append(leaf)
                j += 1
            else:
                raise Unsupported
            text = texts[j]
        self.depth -= 1
        fields = {"loc": self.loc(i, j), "selections": tuple(selections)}
        return make_node(SelectionSetNode, fields), j + 1

    def field(self, i: int) -> tuple[FieldNode, int]:
        """A field with more than a name."""
        texts = self.texts
        name = self.name(i)
        alias = arguments = directives = selection_set = None
        j = i + 1
        if texts[j] == ":":
            alias = name
            name = self.name(j + 1)
            j += 2
        if texts[j] == "(":
            arguments, j = self.arguments(j, const=False)
        if texts[j] == "@":
            directives, j = self.directives(j, const=False)
        if texts[j] == "{":
            selection_set, j = self.selection_set(j)
        node = new_node(FieldNode)
        fields = node.__dict__
        fields["loc"] = self.loc(i, j - 1)
        fields["directives"] = directives
        fields["name"] = name
        fields["alias"] = alias
        fields["arguments"] = arguments
        fields["selection_set"] = selection_set
        return node, j

    def arguments(self, i: int, *, const: bool) -> tuple[tuple[ArgumentNode, ...], int]:
        texts = self.texts
        arguments = []
        j = i + 1
        while True:
            name = self.name(j)
            if texts[j + 1] != ":":
                raise Unsupported
            value, k = self.value(j + 2, const=const)
            argument = new_node(ArgumentNode)
            fields = argument.__dict__
            fields["loc"] = self.loc(j, k - 1)
            fields["name"] = name
            fields["value"] = value
            arguments.append(argument)
            j = k
            if texts[j] == ")":
                return tuple(arguments), j + 1

    def directives(self, i: int, *, const: bool) -> tuple[tuple[DirectiveNode, ...] | None, int]:
        texts = self.texts
        directives = []
        while texts[i] == "@":
            name = self.name(i + 1)
            arguments = None
            j = i + 2
            if texts[j] == "(":
                arguments, j = self.arguments(j, const=const)
            fields = {"loc": self.loc(i, j - 1), "name": name, "arguments": arguments}
            directives.append(make_node(DirectiveNode, fields))
            i = j
        return (tuple(directives) if directives else None), i

    def fragment(self, i: int) -> tuple[FragmentSpreadNode | InlineFragmentNode, int]:
        """A fragment spread or an inline fragment, from its ``...``."""
        after = self.texts[i + 1]
        type_condition = None
        j = i + 1
        if after == "on":
            type_condition = self.named_type(i + 2)
            j = i + 3
        elif after.isidentifier():
            name = self.name(i + 1)
            directives, j = self.directives(i + 2, const=False)
            fields: dict[str, Any] = {
                "loc": self.loc(i, j - 1),
                "directives": directives,
                "name": name,
                "arguments": None,
            }
            return make_node(FragmentSpreadNode, fields), j
        directives, j = self.directives(j, const=False)
        selection_set, j = self.selection_set(j)
        fields = {
            "loc": self.loc(i, j - 1),
            "directives": directives,
            "selection_set": selection_set,
            "type_condition": type_condition,
        }
        return make_node(InlineFragmentNode, fields), j

    def fragment_definition(self, i: int) -> tuple[FragmentDefinitionNode, int]:
        texts = self.texts
        if texts[i + 1] == "on" or texts[i + 2] != "on":
            raise Unsupported
        name = self.name(i + 1)
        type_condition = self.named_type(i + 3)
        directives, j = self.directives(i + 4, const=False)
        selection_set, j = self.selection_set(j)
        fields = {
            "loc": self.loc(i, j - 1),
            "selection_set": selection_set,
            "description": None,
            "name": name,
            "variable_definitions": (),
            "directives": directives,
            "type_condition": type_condition,
        }
        return make_node(FragmentDefinitionNode, fields), j
