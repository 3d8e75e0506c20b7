"""The walk that counts a document's cost: each field at the cost the model gives it
(edge/cost_model.py), the selections of a list's items multiplied by its size. Each selection
set (a fragment's included) is costed once per type, path and size, so fragments spread many
times cost no more time to count."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
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

from edge.cost_model import FIELD_COSTS, FREE

__all__ = ["document_cost"]


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
        spec = FIELD_COSTS.get(f"{parent.name}.{name}", FREE)
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
