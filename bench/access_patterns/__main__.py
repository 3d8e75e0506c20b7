"""``python -m bench.access_patterns``: the command line of :mod:`bench.access_patterns.cli`."""

from bench.access_patterns.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
