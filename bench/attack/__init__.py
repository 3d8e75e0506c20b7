"""The mixed workload under attack: the legitimate clients' latency while anonymous attackers send
the costliest documents the limits admit.

``python -m bench.attack`` runs it; the command line is :mod:`bench.attack.cli`.
"""
