"""``python -m docsgen [--check]``: write the reference pages of docs/reference/ from the code
(``make docs-reference``); with ``--check``, write nothing and exit 1 when a committed page
differs from what the code gives, naming it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from docsgen import ROOT, render_reference

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docsgen", description="Generate docs/reference/ from the code."
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a page is out of date"
    )
    args = parser.parse_args(argv)
    stale = []
    for path, text in render_reference().items():
        target = ROOT / path
        if target.exists() and target.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    for path in stale:
        print(f"{'out of date' if args.check else 'wrote'}: {path}")
    if args.check and stale:
        print("run `make docs-reference` (python -m docsgen) and commit the pages", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
