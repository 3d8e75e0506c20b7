"""Benchmarks of the service against DynamoDB Local."""
