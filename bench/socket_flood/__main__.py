"""``python -m bench.socket_flood``: the command line of :mod:`bench.socket_flood.cli`."""

from bench.socket_flood.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
