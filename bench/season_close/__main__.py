"""``python -m bench.season_close``: the command line of :mod:`bench.season_close.cli`."""

from bench.season_close.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
