"""``python -m bench.rank_index``: the command line of :mod:`bench.rank_index.cli`."""

from bench.rank_index.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
