"""What DynamoDB bills for each operation of the service, what the benchmark's mix costs, and how
many plays per second one board takes before its partition's write ceiling.

``python -m bench.capacity`` runs it; the command line is :mod:`bench.capacity.cli`.
"""
