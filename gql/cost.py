"""The cost of a document, computed before it runs, and the limit every document must keep.

The cost is a worst case counted statically from the document and its variables, in points:

- a field that reads the database or the rank index costs its reads (``FIELD_COSTS``): an item
  by key 1, a page's Query 1, a rank ``RANK`` (its entry, its board and the count above it);
- a list or a connection multiplies the cost of what is selected for each of its items by how
  many items it can return: ``first`` (default 20, at most 100), the length of an id list, the
  size of an around-me window, the boards a play names;
- everything else (scalars, fields of an item already read) is free.

A document over ``MAX_COST`` is refused before anything runs, with COST_LIMIT_EXCEEDED naming
its cost and the limit; so is one whose anonymous caller lacks the points in its allowance
(THROTTLED, see gql/throttle.py). Answered requests report their cost in
``extensions.cost``. The check applies to every transport: it is a schema extension.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    get_operation_ast,
    value_from_ast_untyped,
)
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType as Kind

from dynamo import budget
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.plays import MAX_TARGETS
from gql.errors import coded
from gql.validation import VALIDATION_CACHE_SIZE
from resolvers.context import Context

__all__ = [
    "FIELD_COSTS",
    "MAX_COST",
    "RANK",
    "CostLimit",
    "FieldCost",
    "document_cost",
    "remembered_cost",
]

MAX_COST = 1000
"""The most a document may cost."""
RANK = 5
"""A rank: its entry, its board and the count of the entries above it (with the rank index,
one Redis call)."""
DEFAULT_PAGE = 20
MAX_PAGE = 100
MAX_IDS = 100
MAX_AROUND = 50

Arguments = Mapping[str, Any]


@dataclass(frozen=True)
class FieldCost:
    """What a field costs: its own reads, and, for a list, how many items it may return and
    where, below it, each item's selection is."""

    reads: int = 0
    size: Callable[[Arguments], int] | None = None
    items: tuple[str, ...] = ()
    """The path below the field to each item (``("edges", "node")`` for a connection); the
    selections there cost ``size`` times, the others (``pageInfo``) once."""
    per_item: int = 0
    """Reads each item costs by itself (a rank of each board asked)."""


def _clamp(value: Any, default: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return max(0, min(value, high))


def _first(args: Arguments) -> int:
    return _clamp(args.get("first"), DEFAULT_PAGE, MAX_PAGE)


def _ids(name: str) -> Callable[[Arguments], int]:
    def size(args: Arguments) -> int:
        value = args.get(name)
        return min(len(value), MAX_IDS) if isinstance(value, list) else 1

    return size


def _around(args: Arguments) -> int:
    before = _clamp(args.get("before", 5), 5, MAX_AROUND)
    after = _clamp(args.get("after", 5), 5, MAX_AROUND)
    return before + after + 1


def _subscribed(args: Arguments) -> int:
    return _clamp(args.get("first", 10), 10, MAX_PAGE)


_PAGE = ("edges", "node")
_FREE = FieldCost()

FIELD_COSTS: Mapping[str, FieldCost] = {
    # Reads
    "Query.player": FieldCost(reads=1),
    "Query.players": FieldCost(reads=1, size=_ids("ids")),
    "Query.playerByEmail": FieldCost(reads=1),
    "Query.leaderboard": FieldCost(reads=1),
    "Query.leaderboardFamily": FieldCost(reads=1),
    "Query.session": FieldCost(reads=1),
    "Query.gameSessions": FieldCost(reads=1, size=_first, items=_PAGE),
    "Query.moderationLog": FieldCost(reads=1, size=_first, items=_PAGE),
    "Player.entry": FieldCost(reads=1),
    "Player.bestScore": FieldCost(reads=1),
    "Player.scores": FieldCost(reads=1, size=_first, items=_PAGE),
    "Player.sessions": FieldCost(reads=1, size=_first, items=_PAGE),
    "Player.rank": FieldCost(reads=RANK),
    "Player.ranks": FieldCost(size=_ids("leaderboardIds"), per_item=RANK),
    "Leaderboard.family": FieldCost(reads=1),
    "Leaderboard.topScores": FieldCost(reads=1, size=_first, items=_PAGE),
    "Leaderboard.rankOf": FieldCost(reads=RANK),
    "Leaderboard.ranksOf": FieldCost(reads=1, size=_ids("playerIds"), per_item=RANK),
    "Leaderboard.around": FieldCost(reads=2 + RANK, size=_around),
    "LeaderboardFamily.current": FieldCost(reads=1),
    "LeaderboardFamily.previous": FieldCost(reads=1),
    "LeaderboardFamily.board": FieldCost(reads=1),
    "Score.leaderboard": FieldCost(reads=1),
    "Score.player": FieldCost(reads=1),
    "Score.rank": FieldCost(reads=1),
    "Session.player": FieldCost(reads=1),
    "Rank.score": FieldCost(reads=1),
    # Writes: the reads and the transaction of each
    "Mutation.createPlayer": FieldCost(reads=1),
    "Mutation.createLeaderboard": FieldCost(reads=1),
    "Mutation.createLeaderboardFamily": FieldCost(reads=2),
    "Mutation.submitScore": FieldCost(reads=3),
    "SubmitScorePayload.rank": FieldCost(reads=RANK),
    "SubmitScorePayload.entries": FieldCost(size=lambda _: MAX_TARGETS),
    "BoardEntryResult.leaderboard": FieldCost(reads=1),
    "BoardEntryResult.rank": FieldCost(reads=RANK),
    # Live: each push re-reads the board's top
    "Mutation.removeEntry": FieldCost(reads=1),
    # A ban's and an erasure's work grows with the player's entries and sessions; the request's
    # budget of database calls bounds it (an erasure stops within it and is sent again)
    "Mutation.banPlayer": FieldCost(reads=10),
    "Mutation.unbanPlayer": FieldCost(reads=1),
    "Mutation.erasePlayer": FieldCost(reads=20),
    "Subscription.leaderboardChanged": FieldCost(reads=2, size=_subscribed, items=("entries",)),
    # Objects already read with their parent
    "ScoreConnection.edges": _FREE,
    "ScoreConnection.pageInfo": _FREE,
    "SessionConnection.edges": _FREE,
    "SessionConnection.pageInfo": _FREE,
    "ScoreEdge.node": _FREE,
    "SessionEdge.node": _FREE,
    "CreatePlayerPayload.player": _FREE,
    "CreatePlayerPayload.errors": _FREE,
    "CreateLeaderboardPayload.leaderboard": _FREE,
    "CreateLeaderboardPayload.errors": _FREE,
    "CreateLeaderboardFamilyPayload.family": _FREE,
    "CreateLeaderboardFamilyPayload.errors": _FREE,
    "SubmitScorePayload.session": _FREE,
    "SubmitScorePayload.score": _FREE,
    "SubmitScorePayload.errors": _FREE,
    "BoardEntryResult.score": _FREE,
    "LeaderboardTop.entries": _FREE,
    "ModerationActionConnection.edges": _FREE,
    "ModerationActionConnection.pageInfo": _FREE,
    "ModerationActionEdge.node": _FREE,
    "ModerationAction.removed": _FREE,
    "RemoveEntryPayload.removed": _FREE,
    "RemoveEntryPayload.action": _FREE,
    "RemoveEntryPayload.errors": _FREE,
    "BanPlayerPayload.action": _FREE,
    "BanPlayerPayload.errors": _FREE,
    "UnbanPlayerPayload.action": _FREE,
    "UnbanPlayerPayload.errors": _FREE,
    "ErasePlayerPayload.erased": _FREE,
    "ErasePlayerPayload.action": _FREE,
    "ErasePlayerPayload.errors": _FREE,
    "Player.moderation": _FREE,
}
"""Every field of the schema that returns an object, by ``Type.field``; the other fields are
free. A test keeps the table complete."""


class _Costing:
    """Costs one operation; each selection set (a fragment's included) is costed once per
    type, so fragments spread many times cost no more time to count."""

    def __init__(
        self,
        schema: GraphQLSchema,
        document: DocumentNode,
        operation: OperationDefinitionNode,
        variables: Mapping[str, Any],
    ) -> None:
        self.schema = schema
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.variables = dict(variables)
        for definition in operation.variable_definitions or ():
            name = definition.variable.name.value
            if self.variables.get(name) is None and definition.default_value is not None:
                self.variables[name] = value_from_ast_untyped(definition.default_value)
        self._memo: dict[tuple[int, str, tuple[str, ...], int], int] = {}

    def _spread(
        self, selection: InlineFragmentNode | FragmentSpreadNode, parent: GraphQLObjectType
    ) -> tuple[SelectionSetNode, GraphQLObjectType] | None:
        """The selections a fragment adds, and the type they are selected on."""
        if isinstance(selection, InlineFragmentNode):
            return selection.selection_set, self._condition(selection.type_condition, parent)
        fragment = self.fragments.get(selection.name.value)
        if fragment is None:
            return None
        return fragment.selection_set, self._condition(fragment.type_condition, parent)

    def _condition(self, condition: Any, parent: GraphQLObjectType) -> GraphQLObjectType:
        named = self.schema.get_type(condition.name.value) if condition is not None else None
        return named if isinstance(named, GraphQLObjectType) else parent

    def selection_cost(self, selections: SelectionSetNode, parent: GraphQLObjectType) -> int:
        return self._items_cost(selections, parent, (), 1)

    def field_cost(self, node: FieldNode, parent: GraphQLObjectType) -> int:
        name = node.name.value
        definition = parent.fields.get(name)
        if definition is None or name.startswith("__"):
            return 0
        spec = FIELD_COSTS.get(f"{parent.name}.{name}", _FREE)
        size = spec.size(self._arguments(node)) if spec.size is not None else 1
        cost = spec.reads + spec.per_item * size
        returned = get_named_type(definition.type)
        if node.selection_set is None or not isinstance(returned, GraphQLObjectType):
            return cost
        return cost + self._items_cost(node.selection_set, returned, spec.items, size)

    def _items_cost(
        self,
        selections: SelectionSetNode,
        parent: GraphQLObjectType,
        path: tuple[str, ...],
        size: int,
    ) -> int:
        """The cost of a list's selections: those on the path to its items ``size`` times,
        the others once. A fragment's selections are costed on their own, once for each
        (type, path, size) they are met with, whatever the number of spreads."""
        key = (id(selections), parent.name, path, size)
        cost = self._memo.get(key)
        if cost is not None:
            return cost
        cost = 0
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                cost += self._field_in_list(selection, parent, path, size)
            elif isinstance(selection, InlineFragmentNode | FragmentSpreadNode):
                spread = self._spread(selection, parent)
                if spread is not None:
                    cost += self._items_cost(spread[0], spread[1], path, size)
        self._memo[key] = cost
        return cost

    def _field_in_list(
        self, field: FieldNode, parent: GraphQLObjectType, path: tuple[str, ...], size: int
    ) -> int:
        if not path:
            return size * self.field_cost(field, parent)
        definition = parent.fields.get(field.name.value)
        returned = get_named_type(definition.type) if definition is not None else None
        if (
            field.name.value == path[0]
            and field.selection_set is not None
            and isinstance(returned, GraphQLObjectType)
        ):
            return self._items_cost(field.selection_set, returned, path[1:], size)
        return self.field_cost(field, parent)

    def _arguments(self, node: FieldNode) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for argument in node.arguments or ():
            if isinstance(argument.value, VariableNode):
                values[argument.name.value] = self.variables.get(argument.value.name.value)
            else:
                values[argument.name.value] = value_from_ast_untyped(argument.value, self.variables)
        return values


def _root(schema: GraphQLSchema, operation: OperationDefinitionNode) -> GraphQLObjectType | None:
    return {
        OperationType.QUERY: schema.query_type,
        OperationType.MUTATION: schema.mutation_type,
        OperationType.SUBSCRIPTION: schema.subscription_type,
    }[operation.operation]


_COSTS: OrderedDict[bytes, int] = OrderedDict()
"""The cost of the most recent operations, by a digest of the query text, the operation's
name and the variables: clients send the same few operations with the same few variables."""


def _cost_key(query: str, operation_name: str | None, variables: Mapping[str, Any]) -> bytes | None:
    try:
        canonical = json.dumps(
            [operation_name, dict(variables), query],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError):
        return None
    return hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def remembered_cost(
    schema: GraphQLSchema,
    query: str,
    document: DocumentNode,
    operation_name: str | None = None,
    variables: Mapping[str, Any] | None = None,
) -> int:
    """:func:`document_cost`, remembered for the last :data:`VALIDATION_CACHE_SIZE` operations
    (the service has one schema, and ``document`` is the parse of ``query``)."""
    key = _cost_key(query, operation_name, variables or {})
    if key is None:
        return document_cost(schema, document, operation_name, variables)
    cost = _COSTS.get(key)
    if cost is None:
        cost = _COSTS[key] = document_cost(schema, document, operation_name, variables)
        while len(_COSTS) > VALIDATION_CACHE_SIZE:
            _COSTS.popitem(last=False)
    else:
        _COSTS.move_to_end(key)
    return cost


def document_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None = None,
    variables: Mapping[str, Any] | None = None,
) -> int:
    """The static cost of the operation the request runs (0 when it names none that exists)."""
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return 0
    root = _root(schema, operation)
    if root is None:
        return 0
    costing = _Costing(schema, document, operation, variables or {})
    return costing.selection_cost(operation.selection_set, root)


class CostLimit(SchemaExtension):
    """Refuses, before execution, a document over MAX_COST, and one whose anonymous caller
    lacks the points; reports the cost of every costed request in ``extensions.cost``."""

    cost: int | None = None

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        # After validation (the extension runs after the validating one): an invalid document
        # is reported as such, not costed.
        if context.pre_execution_errors == [] and context.graphql_document is not None:
            error = self._admit()
            if error is not None:
                context.pre_execution_errors = [error]
        yield

    def _admit(self) -> GraphQLError | None:
        context = self.execution_context
        assert context.graphql_document is not None
        self.cost = cost = remembered_cost(
            context.schema._schema,
            context.query or "",
            context.graphql_document,
            context.operation_name,
            context.variables,
        )
        request = context.context
        if isinstance(request, Context):
            request.cost = cost
        if cost > MAX_COST:
            return GraphQLError(
                f"the query's cost is {cost}, over the limit of {MAX_COST}: ask for fewer "
                "items (first), fewer ids, or fewer nested lists",
                extensions={
                    "code": ErrorCode.COST_LIMIT_EXCEEDED.value,
                    "cost": cost,
                    "limit": MAX_COST,
                },
            )
        allowance = request.allowance if isinstance(request, Context) else None
        wait = allowance.spend(cost) if allowance is not None else None
        if wait is None:
            return None
        seconds = round(wait)
        return GraphQLError(
            f"this client's allowance of cost points is used up; the query costs {cost}: "
            f"retry in {seconds} s, or authenticate",
            extensions={
                "code": ErrorCode.THROTTLED.value,
                "cost": cost,
                "retryAfter": seconds,
            },
        )

    async def on_execute(self) -> AsyncIterator[None]:
        """Hold the document's cost in points of the process's capacity while it executes
        (a query or mutation: a subscription's pushes are bounded by its own limits); refused
        with SERVICE_OVERLOADED when there is no room in time."""
        context = self.execution_context
        request = context.context
        capacity = request.capacity if isinstance(request, Context) else None
        if (
            capacity is None
            or self.cost is None
            or context.result is not None
            or context.operation_type is Kind.SUBSCRIPTION
        ):
            yield
            return
        try:
            points = await capacity.reserve(self.cost)
        except LeaderboardError as refused:
            context.result = ExecutionResult(data=None, errors=[coded(refused)])
            yield
            return
        try:
            yield
        finally:
            await capacity.release(points)

    def get_results(self) -> dict[str, Any]:
        if self.cost is None:
            return {}
        report: dict[str, Any] = {"requestedQueryCost": self.cost, "maximumQueryCost": MAX_COST}
        spent = budget.current()
        if spent is not None:
            report["dynamodbCalls"] = spent.total
        request = self.execution_context.context
        if isinstance(request, Context) and request.allowance is not None:
            report["throttleStatus"] = request.allowance.status()
        return {"cost": report}
