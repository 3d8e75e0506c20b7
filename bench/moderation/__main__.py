"""``python -m bench.moderation``: the command line of :mod:`bench.moderation.cli`."""

from bench.moderation.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
