"""Documents drawn from the schema's own types, mostly valid: fields of the type at hand with
their arguments, aliases that collide, fields repeated with the same or other arguments, inline
fragments and named fragments on the schema's composite types, ``@include`` and ``@skip``,
variables of many types used where they fit or not; and, at a rate each document draws, the
mistakes the specification's rules refuse (unknown names, wrong literals, missing or repeated
arguments, undefined, unused or misplaced variables, impossible spreads, fragment cycles, other
directives)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any, TypeVar, cast

from graphql import (
    GraphQLBoolean,
    GraphQLCompositeType,
    GraphQLEnumType,
    GraphQLFloat,
    GraphQLID,
    GraphQLInputObjectType,
    GraphQLInt,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLSchema,
    GraphQLString,
    OperationType,
    do_types_overlap,
    get_named_type,
    is_composite_type,
    is_interface_type,
    is_leaf_type,
    is_object_type,
    parse_type,
    type_from_ast,
)
from hypothesis import strategies as st

__all__ = ["schema_document", "schema_documents"]

T = TypeVar("T")

_ALIASES = ("a", "b", "id", "name", "score")
"""Few aliases, some of them field names, so that response names collide."""
_WRONG_LITERALS = (
    "1",
    '"s"',
    "true",
    "null",
    "NOPE",
    "[1, 2]",
    "{a: 1}",
    "2147483648",
    "-2147483649",
    "1.5",
    '"""block"""',
    "$missing",
)
_OTHER_DIRECTIVES = (
    "@nope",
    "@deprecated",
    "@include",
    "@skip(if: true) @skip(if: false)",
    "@include(if: true, if: false)",
    "@skip(if: true, nope: 1)",
)
_WRONG_FIELDS = ("nope", "__schema { nope }", "id { id }", "__type", "__typename { a }")
_OPERATIONS = {
    "query": OperationType.QUERY,
    "mutation": OperationType.MUTATION,
    "subscription": OperationType.SUBSCRIPTION,
}


@dataclass
class _Writer:
    rng: Random
    schema: GraphQLSchema
    chaos: float
    """How often a choice is a mistake."""
    variables: dict[str, str] = field(default_factory=dict)
    """The variables of the document so far, by name: their type."""
    used: set[str] = field(default_factory=set)
    """The variables the definition being written uses."""
    fragments: dict[str, str] = field(default_factory=dict)
    """The fragments that may be spread, by name: their type condition."""
    spread: set[str] = field(default_factory=set)
    aliases: int = 0

    def mistake(self) -> bool:
        return self.rng.random() < self.chaos

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, choices: Sequence[T]) -> T:
        return choices[self.rng.randrange(len(choices))]

    def literal(self, type_: Any, depth: int = 0, constant: bool = False) -> str:
        """A literal for ``type_``, valid unless a mistake is drawn; a variable at times."""
        if self.mistake():
            return self.pick(_WRONG_LITERALS[: -1 if constant else None])
        if not constant and self.chance(0.15):
            return "$" + self.variable(str(type_))
        if isinstance(type_, GraphQLNonNull):
            type_ = type_.of_type
        elif self.chance(0.05):
            return "null"
        if isinstance(type_, GraphQLList):
            if depth > 2 or self.chance(0.3):
                return self.literal(type_.of_type, depth + 1, constant)
            items = [
                self.literal(type_.of_type, depth + 1, constant)
                for _ in range(self.rng.randint(0, 3))
            ]
            return "[" + ", ".join(items) + "]"
        if isinstance(type_, GraphQLInputObjectType):
            fields = [
                f"{name}: {self.literal(f.type, depth + 1, constant)}"
                for name, f in type_.fields.items()
                if isinstance(f.type, GraphQLNonNull) or self.chance(0.3)
            ]
            if self.mistake():
                fields.append(fields[0] if fields and self.chance(0.5) else "nope: 1")
            return "{" + ", ".join(fields) + "}"
        if isinstance(type_, GraphQLEnumType):
            return str(self.pick(sorted(type_.values)))
        return self._scalar(type_)

    def variable(self, type_: str) -> str:
        """A variable of ``type_`` (any variable when a mistake is drawn)."""
        if self.variables and self.mistake():
            name = self.pick(sorted(self.variables))
        else:
            same = [name for name, t in self.variables.items() if t == type_]
            name = self.pick(same) if same and self.chance(0.7) else ""
            if not name:
                name = f"v{len(self.variables)}"
                self.variables[name] = type_
        self.used.add(name)
        return name

    def alias(self) -> str:
        if self.chance(0.1):
            return self.pick(_ALIASES) + ": "
        if self.chance(0.2):
            self.aliases += 1
            return f"a{self.aliases}: "
        return ""

    def _scalar(self, type_: Any) -> str:
        if type_ is GraphQLInt:
            return str(
                self.rng.randint(-(2**31), 2**31 - 1)
                if self.chance(0.5)
                else self.rng.randint(0, 100)
            )
        if type_ is GraphQLFloat:
            return self.pick(["1.5", "2", "-0.25e3"])
        if type_ is GraphQLBoolean:
            return self.pick(["true", "false"])
        if type_ is GraphQLID:
            return self.pick(['"b"', '"p"', "7", '"""x"""'])
        if type_ is GraphQLString:
            return self.pick(['"s"', '""', '"""t"""'])
        choices = {
            "Long": ["0", "12", "999999999999999", "1000000000000000"],
            "DateTime": ['"2026-01-01T00:00:00Z"', '"soon"', "1"],
            "JSON": [
                '{a: 1, b: [true, "x"]}',
                "[1, 2]",
                '"s"',
                "{a: {b: null}}",
                "3",
                "{a: 1, a: 2}",
            ],
        }.get(getattr(type_, "name", ""), ['"x"'])
        return self.pick(choices)

    def arguments(self, arguments: dict[str, Any]) -> str:
        written = [
            f"{name}: {self.literal(argument.type)}"
            for name, argument in arguments.items()
            if (isinstance(argument.type, GraphQLNonNull) and not self.mistake())
            or self.chance(0.4)
        ]
        if self.mistake():
            written.append(written[0] if written and self.chance(0.5) else "nope: 1")
        return f"({', '.join(written)})" if written else ""

    def directives(self) -> str:
        if self.mistake():
            return " " + self.pick(_OTHER_DIRECTIVES)
        if not self.chance(0.15):
            return ""
        name = self.pick(["include", "skip"])
        return f" @{name}(if: {self.literal(GraphQLNonNull(GraphQLBoolean))})"

    def selections(self, parent: GraphQLNamedType, depth: int) -> str:
        """A selection set's selections for ``parent``."""
        fields: dict[str, Any] = (
            parent.fields if is_object_type(parent) or is_interface_type(parent) else {}
        )
        written: list[str] = []
        for _ in range(self.rng.randint(1, 4)):
            kind = self.pick(["field", "field", "field", "again", "inline", "twins", "spread"])
            if kind == "again" and written:
                written.append(self.pick(written))
            elif kind == "inline" and depth < 3:
                written.append(self.inline(parent, depth))
            elif kind == "twins" and depth < 2:
                # The same selections on two types: on two object types they are compared as
                # mutually exclusive.
                first, second = self.condition(parent), self.condition(parent)
                inner = self.selections(first, depth + 1)
                written.append(
                    f"... on {first.name} {{ {inner} }} ... on {second.name} {{ {inner} }}"
                )
            elif kind == "spread" and self.fragments:
                name = self.pick(sorted(self.fragments))
                condition = self.schema.get_type(self.fragments[name])
                if self.mistake() or (condition is not None and self._fits(condition, parent)):
                    written.append(f"...{name}{self.directives()}")
                    self.spread.add(name)
            else:
                written.append(self.field(fields, depth))
        return " ".join(written) or "__typename"

    def field(self, fields: dict[str, Any], depth: int) -> str:
        if self.mistake():
            return self.pick(_WRONG_FIELDS)
        definition = None
        name = "__typename"
        if fields and not self.chance(0.1):
            name = self.pick(sorted(fields))
            definition = fields[name]
        text = self.alias() + name
        if definition is None:
            return text + self.directives()
        text += self.arguments(definition.args) + self.directives()
        named = get_named_type(definition.type)
        if is_leaf_type(named):
            return text
        if depth >= 4:
            return text + " { __typename }"
        return text + " { " + self.selections(named, depth + 1) + " }"

    def inline(self, parent: GraphQLNamedType, depth: int) -> str:
        if self.chance(0.3):
            return f"...{self.directives()} {{ {self.selections(parent, depth + 1)} }}"
        condition = self.condition(parent)
        inner = self.selections(condition, depth + 1)
        return f"... on {condition.name}{self.directives()} {{ {inner} }}"

    def _fits(self, condition: GraphQLNamedType, parent: GraphQLNamedType) -> bool:
        """Whether a fragment on ``condition`` may be spread where ``parent`` is selected."""
        return do_types_overlap(
            self.schema, cast(GraphQLCompositeType, condition), cast(GraphQLCompositeType, parent)
        )

    def condition(self, parent: GraphQLNamedType) -> GraphQLNamedType:
        """A composite type a fragment may spread on in ``parent`` (any composite type when a
        mistake is drawn)."""
        composite: list[GraphQLNamedType] = [
            t
            for t in self.schema.type_map.values()
            if is_composite_type(t) and not t.name.startswith("__")
        ]
        choices = composite if self.mistake() else [t for t in composite if self._fits(t, parent)]
        return self.pick(sorted(choices or [parent], key=lambda t: t.name))


def schema_documents(schema: GraphQLSchema) -> st.SearchStrategy[str]:
    """Documents of ``schema``'s types: one or two operations, a few fragments, variables.
    Each is written from one drawn seed, so that writing one costs little beside validating it;
    hypothesis replays a failing one, but does not shrink it."""
    return st.integers(0, 2**32).map(lambda seed: schema_document(schema, seed))


def schema_document(schema: GraphQLSchema, seed: int) -> str:
    """The document of ``schema``'s types that ``seed`` writes."""
    rng = Random(seed)
    writer = _Writer(rng, schema, rng.choice([0.0, 0.0, 0.0, 0.0, 0.01, 0.05, 0.2]))
    definitions = []
    fragments_used: set[str] = set()
    others = [
        t for t in schema.type_map.values() if is_composite_type(t) and not t.name.startswith("__")
    ]
    for i in range(rng.randint(0, 2)):
        on = schema.query_type if writer.chance(0.6) else writer.pick(others)
        condition = writer.condition(cast(GraphQLNamedType, on))
        if writer.mistake():  # a fragment that may spread itself
            writer.fragments[f"F{i}"] = condition.name
        selections = writer.selections(condition, 1)
        writer.fragments[f"F{i}"] = condition.name
        definitions.append(f"fragment F{i} on {condition.name} {{ {selections} }}")
    fragments_used, writer.used = writer.used, set()
    count = rng.randint(1, 2)
    operations = []
    for i in range(count):
        kind = writer.pick(["query", "query", "query", "mutation", "subscription"])
        root = schema.get_root_type(_OPERATIONS[kind])
        if root is None:
            continue
        if kind == "subscription" and not writer.mistake():
            fields: dict[str, Any] = root.fields
            one = writer.pick(sorted(fields))
            selections = writer.field({one: fields[one]}, 0)
        else:
            selections = writer.selections(root, 0)
        if i == count - 1 and root is schema.query_type:
            unused = sorted(set(writer.fragments) - writer.spread)
            selections += "".join(
                f" ...{name}" for name in unused if writer.fragments[name] == root.name
            )
        used = sorted(writer.used | fragments_used)
        if writer.mistake() and writer.variables:
            used.append(writer.pick(sorted(writer.variables)))
        if writer.mistake() and used:
            used.remove(writer.pick(used))
        writer.used = set()
        declared = [
            f"${v}: {writer.variables[v]}" + _default(writer, writer.variables[v])
            for v in dict.fromkeys(used)
        ]
        if writer.mistake():  # a variable of a type that is unknown, or not an input type
            declared.append(f"$wrong: {writer.pick(['Nope', '[Nope]', root.name + '!'])}")
        name = f" Q{i}" if count > 1 or writer.chance(0.5) else ""
        variables = f"({', '.join(declared)})" if declared else ""
        operations.append(f"{kind}{name}{variables} {{ {selections} }}")
    return " ".join(operations + definitions)


def _default(writer: _Writer, type_: str) -> str:
    """A default value for a variable of ``type_``, at times."""
    if not writer.chance(0.2):
        return ""
    expected = type_from_ast(writer.schema, parse_type(type_))
    if expected is None:
        return " = 1"
    return " = " + writer.literal(expected, constant=True)
