"""``python -m bench.hot_board``: the command line of :mod:`bench.hot_board.cli`."""

from bench.hot_board.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
