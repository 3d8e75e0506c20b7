"""The cost limit, a schema extension: it applies to every transport that executes documents.

Before execution it counts the document's cost (edge/cost_model.py) and refuses a document over
``MAX_COST``, with COST_LIMIT_EXCEEDED naming its cost and the limit, and one whose anonymous
caller lacks the points in its allowance (THROTTLED, see edge/throttle.py). While a query or a
mutation executes it holds its cost in points of the process's capacity (edge/admission.py).
Answered requests report their cost in ``extensions.cost``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType as Kind

from dynamo import budget
from dynamo.errors import ErrorCode, LeaderboardError
from edge.cost_cache import remembered_cost
from edge.cost_model import MAX_COST
from gql.errors import coded
from resolvers.context import Context

__all__ = ["CostLimit"]


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
