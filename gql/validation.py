"""Parsing and validating documents, bounded and cached.

A document is refused, cheapest check first, when its text is over :data:`MAX_CHARACTERS`, when
it has more than :data:`MAX_TOKENS` tokens (the parser stops there), when it breaks a structural
limit (operations, fragments, fragment spreads or fields of one response name per selection set,
depth, aliases: each checked in time linear in the document), and only then by the rules of the
GraphQL specification (:mod:`gql.rules`), whose costliest one (OverlappingFieldsCanBeMerged,
quadratic in the fields of one response name) the structural limits and :data:`MAX_MERGE_WORK`
bound. A document over a limit is refused with that limit's own code (``TOKEN_LIMIT_EXCEEDED``,
``ALIAS_LIMIT_EXCEEDED``, ...) and the limit in ``extensions.limit``; one the specification's
rules refuse, with GRAPHQL_VALIDATION_FAILED. At most :data:`MAX_ERRORS` errors are reported,
without "did you mean" suggestions.

The limits are set so that each one can be reached: within :data:`MAX_TOKENS`, a document can
exceed every other limit, and :data:`MAX_CHARACTERS` holds :data:`MAX_TOKENS` tokens as a
frontend prints them (about 7 characters a token, deeper indentation included).

The outcome is kept by query text: the last :data:`VALIDATION_CACHE_SIZE` valid documents, and
the last :data:`REFUSED_CACHE_SIZE` refused ones with their errors, each cache holding at most
:data:`VALIDATION_CACHE_TOKENS` and :data:`REFUSED_CACHE_TOKENS` tokens of documents (their
parsed form is most of the memory), so a client sending the same document again (valid or not)
costs a dictionary look-up.
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
)
from strawberry.extensions import SchemaExtension

from dynamo.errors import ErrorCode
from gql.limits import measure_operations
from gql.rules import MergeWorkExceeded, run_rules

__all__ = [
    "MAX_ALIASES",
    "MAX_CHARACTERS",
    "MAX_DEPTH",
    "MAX_ERRORS",
    "MAX_FRAGMENTS",
    "MAX_MERGE_WORK",
    "MAX_OPERATIONS",
    "MAX_SAME_NAME",
    "MAX_SPREADS",
    "MAX_TOKENS",
    "REFUSED_CACHE_SIZE",
    "REFUSED_CACHE_TOKENS",
    "STATS",
    "VALIDATION_CACHE_SIZE",
    "VALIDATION_CACHE_TOKENS",
    "Checked",
    "DocumentLimits",
    "Documents",
]

MAX_TOKENS = 1000
"""Most lexical tokens in a document, as GraphQL Armor and Hive Gateway have it: a frontend's
fragments with Apollo Client's ``__typename`` in every selection set take several hundred, 40
aliased one-field boards (``a0: leaderboard(id: "x") { id }``) 442, GraphiQL's introspection
query 183."""
MAX_CHARACTERS = 12_000
"""Longest query text, refused before parsing (variables are not counted). A document as a
frontend prints it (two spaces of indentation a level) takes about 7 characters a token, so
this holds :data:`MAX_TOKENS` of them even nested to the depth limit, while bounding what the
lexer reads between tokens (comments, white space, long strings)."""
MAX_DEPTH = 10
"""Deepest selection nesting accepted (the deepest useful query nests 8)."""
MAX_ALIASES = 40
"""Most aliased fields in a document, counting every expansion of a fragment."""
MAX_OPERATIONS = 10
"""Most operations in one document."""
MAX_FRAGMENTS = 20
"""Most fragment definitions in one document."""
MAX_SPREADS = 8
"""Most fragment spreads in one selection set."""
MAX_SAME_NAME = MAX_SPREADS + 1
"""Most fields of one response name in one selection set, counting those its fragments bring:
as many fragments as a selection set may spread, each with the ``__typename`` (or ``id``) that
Apollo Client adds to every selection set, and the selection set's own."""
MAX_MERGE_WORK = 2000
"""Most work OverlappingFieldsCanBeMerged may do, in graphql-core's units (2 a pair of fields
compared): fields repeated inside repeated fields multiply its comparisons (5 ``sessions``, each
with 5 ``edges``, each with 5 ``node``, took about 40,000 units and 100 ms in 600 tokens), which
no per-selection-set count bounds. Every documented operation takes under 300."""
MAX_ERRORS = 10
"""Most errors reported for one document; the last one then says that validation stopped."""
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
    tokens: int = 0
    """The document's tokens, comments included (its parsed form keeps each of them)."""


def _refusal(message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"code": ErrorCode.GRAPHQL_VALIDATION_FAILED.value})


def _over(
    code: ErrorCode, limit: int, message: str, node: OperationDefinitionNode | None = None
) -> GraphQLError:
    """A refusal by one of the limits: its code, and the limit."""
    return GraphQLError(message, node, extensions={"code": code.value, "limit": limit})


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
        yield _over(
            ErrorCode.SPREAD_LIMIT_EXCEEDED,
            MAX_SPREADS,
            f"{spreads} fragment spreads in one selection set. Allowed: {MAX_SPREADS}",
        )
    for name, count in _response_names(selections, fragments, memo, set()).items():
        if count > MAX_SAME_NAME:
            yield _over(
                ErrorCode.SAME_NAME_LIMIT_EXCEEDED,
                MAX_SAME_NAME,
                f"{count} fields named '{name}' in one selection set, fragments included."
                f" Allowed: {MAX_SAME_NAME}",
            )


def structural_errors(document: DocumentNode) -> Iterator[GraphQLError]:
    """The document's breaches of the structural limits, each found in linear time (the
    depth and alias limits first, then the counts)."""
    measured = measure_operations(document)
    for operation, measure in measured.items():
        if measure.depth > MAX_DEPTH:
            name = operation.name.value if operation.name else "anonymous"
            yield _over(
                ErrorCode.DEPTH_LIMIT_EXCEEDED,
                MAX_DEPTH,
                f"'{name}' exceeds maximum operation depth of {MAX_DEPTH}",
                operation,
            )
    aliases = sum(m.aliases for m in measured.values())
    if aliases > MAX_ALIASES:
        yield _over(
            ErrorCode.ALIAS_LIMIT_EXCEEDED,
            MAX_ALIASES,
            f"{aliases} aliases found. Allowed: {MAX_ALIASES}",
        )
    operations = sum(isinstance(d, OperationDefinitionNode) for d in document.definitions)
    if operations > MAX_OPERATIONS:
        yield _over(
            ErrorCode.OPERATION_LIMIT_EXCEEDED,
            MAX_OPERATIONS,
            f"{operations} operations found. Allowed: {MAX_OPERATIONS}",
        )
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    definitions = sum(isinstance(d, FragmentDefinitionNode) for d in document.definitions)
    if definitions > MAX_FRAGMENTS:
        yield _over(
            ErrorCode.FRAGMENT_LIMIT_EXCEEDED,
            MAX_FRAGMENTS,
            f"{definitions} fragment definitions found. Allowed: {MAX_FRAGMENTS}",
        )
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


def _tokens(document: DocumentNode) -> int:
    """The document's tokens, as the parser counted them (comments included)."""
    count = getattr(document, "token_count", 0)
    return count if isinstance(count, int) else 0


_TOO_MANY_TOKENS = f"Document contains more than {MAX_TOKENS} tokens. Parsing aborted."
"""How the parser's syntax error for the token limit ends."""


def check_document(schema: GraphQLSchema, query: str) -> Checked:
    """Parse and validate ``query`` against ``schema``, uncached."""
    if len(query) > MAX_CHARACTERS:
        message = f"Document has {len(query)} characters. Allowed: {MAX_CHARACTERS}"
        return Checked(None, (_over(ErrorCode.CHARACTER_LIMIT_EXCEEDED, MAX_CHARACTERS, message),))
    STATS.parsed += 1
    try:
        document = parse(query, max_tokens=MAX_TOKENS)
    except GraphQLError as error:
        if error.message.endswith(_TOO_MANY_TOKENS):
            over = _over(ErrorCode.TOKEN_LIMIT_EXCEEDED, MAX_TOKENS, error.message)
            return Checked(None, (over,))
        return Checked(None, (_refusal(error.message),))
    except RecursionError:  # pragma: no cover - the token limit keeps nesting shallow
        return Checked(None, (_refusal("Document nested too deeply to parse."),))
    tokens = _tokens(document)
    refused = _capped(structural_errors(document))
    if refused:
        return Checked(document, refused, tokens)
    STATS.validated += 1
    try:
        errors = run_rules(schema, document, MAX_ERRORS, merge_work=MAX_MERGE_WORK)
    except MergeWorkExceeded:
        message = (
            "Checking that fields of one response name can be merged takes more than"
            f" {MAX_MERGE_WORK} units: fewer fields repeated inside repeated fields"
        )
        return Checked(
            document, (_over(ErrorCode.MERGE_LIMIT_EXCEEDED, MAX_MERGE_WORK, message),), tokens
        )
    return Checked(document, _capped(errors), tokens)


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
