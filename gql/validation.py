"""Parsing and validating documents, bounded and cached.

A document is refused, cheapest check first, when its text is over :data:`MAX_CHARACTERS`, when
it has more than :data:`MAX_TOKENS` tokens (the parser stops there), when it breaks a structural
limit (operations, fragments, fragment spreads or fields of one response name per selection set,
depth, aliases: each checked in time linear in the document), and only then by the rules of the
GraphQL specification, whose costliest one (OverlappingFieldsCanBeMerged, quadratic in the
fields of one response name) the structural limits bound. At most :data:`MAX_ERRORS` errors are
reported, without "did you mean" suggestions.

The outcome is kept by query text: the last :data:`VALIDATION_CACHE_SIZE` valid documents, and
the last :data:`REFUSED_CACHE_SIZE` refused ones with their errors, so a client sending the same
document again (valid or not) costs a dictionary look-up.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from threading import Lock

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    NameNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    parse,
    specified_rules,
    validate,
)
from strawberry.extensions import SchemaExtension
from strawberry.schema.validation_rules.maybe_null import MaybeNullValidationRule
from strawberry.schema.validation_rules.one_of import OneOfInputValidationRule

from gql.errors import VALIDATION_FAILED
from gql.limits import measure_operations

__all__ = [
    "MAX_ALIASES",
    "MAX_CHARACTERS",
    "MAX_DEPTH",
    "MAX_ERRORS",
    "MAX_FRAGMENTS",
    "MAX_OPERATIONS",
    "MAX_SAME_NAME",
    "MAX_SPREADS",
    "MAX_TOKENS",
    "REFUSED_CACHE_SIZE",
    "STATS",
    "VALIDATION_CACHE_SIZE",
    "Checked",
    "DocumentLimits",
    "Documents",
]

MAX_CHARACTERS = 4096
"""Longest query text, refused before parsing (variables are not counted)."""
MAX_TOKENS = 250
"""Most lexical tokens in a document (GraphiQL's introspection query has 184)."""
MAX_DEPTH = 10
"""Deepest selection nesting accepted (the deepest useful query nests 8)."""
MAX_ALIASES = 40
"""Most aliased fields in a document, counting every expansion of a fragment."""
MAX_OPERATIONS = 10
"""Most operations in one document."""
MAX_FRAGMENTS = 20
"""Most fragment definitions in one document."""
MAX_SAME_NAME = 5
"""Most fields of one response name in one selection set (as written, fragments apart)."""
MAX_SPREADS = 8
"""Most fragment spreads in one selection set."""
MAX_ERRORS = 10
"""Most errors reported for one document; the last one then says that validation stopped."""
VALIDATION_CACHE_SIZE = 256
"""Valid documents kept, by query text."""
REFUSED_CACHE_SIZE = 64
"""Refused documents kept with their errors, by query text."""

RULES = (*specified_rules, MaybeNullValidationRule, OneOfInputValidationRule)
"""The rules of the specification, and Strawberry's own (as Strawberry validates)."""


@dataclass
class Stats:
    """How often the costly steps ran: a document served from the cache runs neither."""

    parsed: int = 0
    validated: int = 0


STATS = Stats()


@dataclass(frozen=True)
class Checked:
    """A document parsed and validated: its AST (None when it did not parse), and the errors
    refusing it (none when it is valid)."""

    document: DocumentNode | None
    errors: tuple[GraphQLError, ...] = ()


def _refusal(message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"code": VALIDATION_FAILED})


def _selection_sets(document: DocumentNode) -> Iterator[SelectionSetNode]:
    """Every selection set written in the document, each once (fragments not expanded)."""
    stack = [
        d.selection_set
        for d in document.definitions
        if isinstance(d, OperationDefinitionNode | FragmentDefinitionNode)
    ]
    while stack:
        selections = stack.pop()
        yield selections
        for selection in selections.selections:
            nested = getattr(selection, "selection_set", None)
            if nested is not None:
                stack.append(nested)


def _response_names(
    selections: SelectionSetNode,
    fragments: dict[str, FragmentDefinitionNode],
    memo: dict[int, Counter[str]],
    on_path: set[str],
) -> Counter[str]:
    """How many fields of each response name the selection set merges, its inline fragments
    and the fragments it spreads included (each expansion counted); memoized by selection set,
    so in time linear in the document. A fragment on the current path (a cycle, which the
    specification's rules refuse) counts as empty."""
    found = memo.get(id(selections))
    if found is not None:
        return found
    names: Counter[str] = Counter()
    for selection in selections.selections:
        if isinstance(selection, FieldNode):
            names[(selection.alias or selection.name).value] += 1
        elif isinstance(selection, InlineFragmentNode):
            names.update(_response_names(selection.selection_set, fragments, memo, on_path))
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            if fragment is not None and name not in on_path:
                on_path.add(name)
                names.update(_response_names(fragment.selection_set, fragments, memo, on_path))
                on_path.discard(name)
    memo[id(selections)] = names
    return names


def _selection_set_errors(
    selections: SelectionSetNode,
    fragments: dict[str, FragmentDefinitionNode],
    memo: dict[int, Counter[str]],
) -> Iterator[GraphQLError]:
    spreads = sum(isinstance(s, FragmentSpreadNode) for s in selections.selections)
    if spreads > MAX_SPREADS:
        yield _refusal(f"{spreads} fragment spreads in one selection set. Allowed: {MAX_SPREADS}")
    for name, count in _response_names(selections, fragments, memo, set()).items():
        if count > MAX_SAME_NAME:
            yield _refusal(
                f"{count} fields named '{name}' in one selection set, fragments included."
                f" Allowed: {MAX_SAME_NAME}"
            )


def structural_errors(document: DocumentNode) -> Iterator[GraphQLError]:
    """The document's breaches of the structural limits, each found in linear time (the
    depth and alias limits first, then the counts)."""
    measured = measure_operations(document)
    for operation, measure in measured.items():
        if measure.depth > MAX_DEPTH:
            name = operation.name.value if operation.name else "anonymous"
            yield GraphQLError(
                f"'{name}' exceeds maximum operation depth of {MAX_DEPTH}",
                operation,
                extensions={"code": VALIDATION_FAILED},
            )
    aliases = sum(m.aliases for m in measured.values())
    if aliases > MAX_ALIASES:
        yield _refusal(f"{aliases} aliases found. Allowed: {MAX_ALIASES}")
    operations = sum(isinstance(d, OperationDefinitionNode) for d in document.definitions)
    if operations > MAX_OPERATIONS:
        yield _refusal(f"{operations} operations found. Allowed: {MAX_OPERATIONS}")
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    definitions = sum(isinstance(d, FragmentDefinitionNode) for d in document.definitions)
    if definitions > MAX_FRAGMENTS:
        yield _refusal(f"{definitions} fragment definitions found. Allowed: {MAX_FRAGMENTS}")
        return  # counting through them is not needed to refuse the document
    memo: dict[int, Counter[str]] = {}
    for selections in _selection_sets(document):
        yield from _selection_set_errors(selections, fragments, memo)


def _capped(errors: Iterator[GraphQLError] | list[GraphQLError]) -> tuple[GraphQLError, ...]:
    kept: list[GraphQLError] = []
    for error in errors:
        if len(kept) == MAX_ERRORS - 1:
            kept.append(
                _refusal("Too many validation errors, error limit reached. Validation aborted.")
            )
            break
        kept.append(error)
    return tuple(kept)


def check_document(schema: GraphQLSchema, query: str) -> Checked:
    """Parse and validate ``query`` against ``schema``, uncached."""
    if len(query) > MAX_CHARACTERS:
        return Checked(
            None,
            (_refusal(f"Document has {len(query)} characters. Allowed: {MAX_CHARACTERS}"),),
        )
    STATS.parsed += 1
    try:
        document = parse(query, max_tokens=MAX_TOKENS)
    except GraphQLError as error:
        return Checked(None, (_refusal(error.message),))
    except RecursionError:  # pragma: no cover - the token limit keeps nesting shallow
        return Checked(None, (_refusal("Document nested too deeply to parse."),))
    refused = _capped(structural_errors(document))
    if refused:
        return Checked(document, refused)
    STATS.validated += 1
    errors = validate(schema, document, RULES, max_errors=MAX_ERRORS - 1, hide_suggestions=True)
    return Checked(document, _capped(errors))


@dataclass
class Documents:
    """The cache of checked documents, by query text, for one schema: bounded LRUs of valid
    documents and of refused ones."""

    valid_size: int = VALIDATION_CACHE_SIZE
    refused_size: int = REFUSED_CACHE_SIZE
    _valid: OrderedDict[str, Checked] = field(default_factory=OrderedDict)
    _refused: OrderedDict[str, Checked] = field(default_factory=OrderedDict)
    _lock: Lock = field(default_factory=Lock)

    def check(self, schema: GraphQLSchema, query: str) -> Checked:
        if len(query) > MAX_CHARACTERS:  # refused at once, and not kept
            return check_document(schema, query)
        with self._lock:
            for cache in (self._valid, self._refused):
                found = cache.get(query)
                if found is not None:
                    cache.move_to_end(query)
                    return found
        checked = check_document(schema, query)
        cache, size = (
            (self._refused, self.refused_size) if checked.errors else (self._valid, self.valid_size)
        )
        with self._lock:
            cache[query] = checked
            cache.move_to_end(query)
            while len(cache) > size:
                cache.popitem(last=False)
        return checked

    def clear(self) -> None:
        with self._lock:
            self._valid.clear()
            self._refused.clear()


def _stand_in(operation_name: str | None) -> DocumentNode:
    """An empty query standing for a document that did not parse: execution stops at its
    validation errors, and the operation's type (a query) lets it get there on any transport."""
    return DocumentNode(
        definitions=(
            OperationDefinitionNode(
                operation=OperationType.QUERY,
                name=NameNode(value=operation_name) if operation_name else None,
                variable_definitions=(),
                directives=(),
                selection_set=SelectionSetNode(selections=()),
            ),
        )
    )


class DocumentLimits(SchemaExtension):
    """Parses and validates each request's document through :class:`Documents`, in place of
    Strawberry's own parsing and validation."""

    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self.checked: Checked | None = None

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is None and context.query:
            self.checked = self.documents.check(context.schema._schema, context.query)
            context.graphql_document = self.checked.document or _stand_in(context.operation_name)
        yield

    def on_validate(self) -> Iterator[None]:
        # Before the extensions after this one (the cost limit) look at the outcome.
        if self.checked is not None:
            self.execution_context.pre_execution_errors = list(self.checked.errors)
        yield
