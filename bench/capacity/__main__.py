"""``python -m bench.capacity``: the command line of :mod:`bench.capacity.cli`."""

from bench.capacity.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
