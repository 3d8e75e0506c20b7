"""``python -m bench.validation``: the command line of :mod:`bench.validation.cli`."""

from bench.validation.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
