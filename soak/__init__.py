"""The load soak: sustained mixed load on the real service (a fleet of ``leaderboard serve``
processes, or instances in one process), the staleness of its subscribers and cached answers
measured meanwhile, then an exact check of the table.

``python -m soak`` runs it (see :mod:`soak.__main__`); :mod:`soak.invariants` is the checker,
usable on any table; :mod:`soak.staleness` judges what the observers of :mod:`soak.watch` saw.
"""
