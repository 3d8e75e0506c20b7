"""The GraphQL layer: Strawberry types, the schema, and the aiohttp view."""
