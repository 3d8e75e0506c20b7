"""The load soak: sustained mixed load on the real service, then an exact check of the table.

``python -m soak`` runs it (see :mod:`soak.__main__`); :mod:`soak.invariants` is the checker,
usable on any table.
"""
