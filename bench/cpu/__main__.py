"""``python -m bench.cpu``: the command line of :mod:`bench.cpu.cli`."""

from bench.cpu.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
