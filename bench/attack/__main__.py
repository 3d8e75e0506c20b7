"""``python -m bench.attack``: the command line of :mod:`bench.attack.cli`."""

from bench.attack.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
