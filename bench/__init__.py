"""Benchmarks of the service against DynamoDB Local: what they share in :mod:`bench.core`, and
one package per benchmark, each run as ``python -m bench.<name>``; ``python -m bench`` runs the
whole benchmark (:mod:`bench.__main__`)."""
