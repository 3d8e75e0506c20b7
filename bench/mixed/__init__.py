"""Throughput and latency of the mixed frontend workload against the service in its own process, at
several numbers of concurrent clients.

``python -m bench.mixed`` runs it; the command line is :mod:`bench.mixed.cli`.
"""
