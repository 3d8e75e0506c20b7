"""What DynamoDB bills for each operation of the service, what the benchmark's mix costs, how
many plays per second one board takes before its partition's write ceiling, and what a board
of N partitions takes: the write units its busiest partition key receives and the
transactions its hottest item is in at a given rate of plays, and what its top 100 reads.

``python -m bench.capacity`` runs it; the command line is :mod:`bench.capacity.cli`.
"""
