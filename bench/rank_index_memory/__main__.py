"""``python -m bench.rank_index_memory``: the command line of :mod:`bench.rank_index_memory.cli`."""

from bench.rank_index_memory.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
