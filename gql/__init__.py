"""The schema: its Strawberry types (queries, mutations, subscriptions), inputs, enums, scalars,
payloads and typed errors."""
