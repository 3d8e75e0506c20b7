"""The documentation site builds without a warning and works offline: nothing it loads comes
from another host (no web font, no CDN), and its search index covers the pages."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = Path(sys.executable).parent / "mkdocs"
_TAG = re.compile(r"<(?P<tag>script|img|iframe|source|link)\b[^>]*>")
_ATTRIBUTE = re.compile(r"\b(?P<name>src|href|rel)=\"(?P<value>[^\"]*)\"")
_CSS_URL = re.compile(r"url\(\s*['\"]?(?P<url>[^'\")]+)")
_LOADING_LINKS = {"stylesheet", "preconnect", "preload", "modulepreload", "icon", "manifest"}
"""The kinds of ``<link>`` a browser fetches (or connects for) as it shows the page; the others
(``canonical``, ``alternate``, ...) only name a page."""


def _build(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
        check=False,
    )


def _remote(site: Path) -> set[str]:
    """What any page or stylesheet of the site loads from another host (the links a reader
    follows, ``<a href>``, are not loads)."""
    found = set()
    for path in [*site.rglob("*.html"), *site.rglob("*.css")]:
        text = path.read_text()
        targets = [m.group("url") for m in _CSS_URL.finditer(text)]
        for tag in _TAG.finditer(text):
            attributes = {a.group("name"): a.group("value") for a in _ATTRIBUTE.finditer(tag[0])}
            if tag.group("tag") != "link":
                targets.append(attributes.get("src", ""))
            elif _LOADING_LINKS & set(attributes.get("rel", "").split()):
                targets.append(attributes.get("href", ""))
        found |= {
            f"{path.relative_to(site)}: {target}"
            for target in targets
            if target.startswith(("http:", "https:", "//"))
        }
    return found


def test_the_site_builds_strictly_and_loads_nothing_from_elsewhere(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = _build(site)
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    assert _remote(site) == set()
    index = json.loads((site / "search" / "search_index.json").read_text())
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert {"reference/schema/", "reference/limits/", "reference/settings/"} <= locations
    assert (site / "assets" / "javascripts" / "lunr").is_dir()


def test_a_web_font_would_be_found(tmp_path: Path) -> None:
    """The check of remote loads sees what Material loads with its fonts on."""
    page = tmp_path / "index.html"
    page.write_text(
        '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>'
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<a href="https://example.com/">a link</a><script src="assets/local.js"></script>'
    )
    assert _remote(tmp_path) == {
        "index.html: https://fonts.gstatic.com",
        "index.html: https://fonts.googleapis.com/css?family=Roboto",
    }
