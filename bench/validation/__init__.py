"""What parsing and validating the worst documents the limits allow costs.

``python -m bench.validation`` runs it; the command line is :mod:`bench.validation.cli`.
"""
