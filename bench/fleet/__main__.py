"""``python -m bench.fleet``: the command line of :mod:`bench.fleet.cli`."""

from bench.fleet.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
