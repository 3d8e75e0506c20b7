"""``python -m bench.mixed``: the command line of :mod:`bench.mixed.cli`."""

from bench.mixed.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
