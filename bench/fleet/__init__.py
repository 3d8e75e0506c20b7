"""The mixed workload against the floor of its design: the same clients sending the raw calls
the service makes, then the service with one worker and with one worker per core, its response
cache off and on, all on one loaded table.

``python -m bench.fleet`` runs it; the command line is :mod:`bench.fleet.cli`.
"""
