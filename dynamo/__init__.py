"""The DynamoDB layer: one table, key codecs per entity, one function per access pattern.

Nothing in this package knows about GraphQL. Callers receive pydantic item models and
opaque pagination cursors, never raw DynamoDB attribute maps.
"""
