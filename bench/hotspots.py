"""``python -m bench.hotspots SAMPLES.txt [--seconds S] [--rate R]``: the summary of a py-spy
profile of the service, as :mod:`bench.core.load.hotspots` writes it beside the results."""

from bench.core.load.hotspots import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
