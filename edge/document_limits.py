"""The schema extension that parses and validates each request's document through the cache of
checked documents, with the document limits, in place of Strawberry's own parsing and
validation: one place for every transport that executes documents."""

from __future__ import annotations

from collections.abc import Iterator

from graphql import DocumentNode, NameNode, OperationDefinitionNode, OperationType, SelectionSetNode
from strawberry.extensions import SchemaExtension

from edge.document_cache import Documents
from edge.validation import Checked

__all__ = ["DocumentLimits"]


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
