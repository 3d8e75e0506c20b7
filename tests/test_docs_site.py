"""The documentation site builds without a warning and works offline: nothing it loads comes
from another host (no web font, no CDN), and its search index covers the pages. The README
stays a short front door; the tutorial's steps are listed, linked and run in one order; the
charts the pages show are the benchmarks' own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from docsgen.examples import README, graphql_blocks, navigation, runs

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = Path(sys.executable).parent / "mkdocs"
_TAG = re.compile(r"<(?P<tag>script|img|iframe|source|link)\b[^>]*>")
_ATTRIBUTE = re.compile(r"\b(?P<name>src|href|rel)=\"(?P<value>[^\"]*)\"")
_CSS_URL = re.compile(r"url\(\s*['\"]?(?P<url>[^'\")]+)")
TUTORIAL = [
    "tutorial/index.md",
    "tutorial/first-steps.md",
    "tutorial/season.md",
    "tutorial/moderation.md",
    "tutorial/deployment-plan.md",
]
"""The tutorial's pages in the order a reader follows them."""
README_LINES = 200
"""The most lines README.md may have: it is the front door, and the pages hold the rest."""
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


def test_the_navigation_lists_the_tutorial_in_order_and_its_steps_run_as_one() -> None:
    """The navigation and the tutorial's index list the steps in one order, and their examples
    run in that order on one service (each step but the first continues the one before)."""
    assert [page for page in navigation(ROOT) if page.startswith("tutorial/")] == TUTORIAL
    index = (ROOT / "docs" / TUTORIAL[0]).read_text()
    steps = re.findall(r"^\d+\. \[[^]]+\]\(([\w-]+\.md)\)", index, flags=re.M)
    assert [f"tutorial/{step}" for step in steps] == TUTORIAL[1:]
    docs = ROOT / "docs"
    assert [docs / page for page in TUTORIAL[1:]] in runs(ROOT)


def test_the_pages_show_the_charts_the_benchmarks_drew() -> None:
    """The pages can show only images inside docs/: the benchmarks' charts are copied to
    docs/assets/bench/, each one a page shows, and must be the ones bench/results holds."""
    shown = {
        name
        for page in (ROOT / "docs").rglob("*.md")
        for name in re.findall(r"assets/bench/([\w.-]+\.png)", page.read_text())
    }
    copies = sorted((ROOT / "docs" / "assets" / "bench").glob("*.png"))
    assert shown
    assert {copy.name for copy in copies} == shown
    for copy in copies:
        assert copy.read_bytes() == (ROOT / "bench" / "results" / copy.name).read_bytes(), copy


def test_the_readme_is_a_short_front_door_with_a_first_query_and_a_first_play() -> None:
    text = (ROOT / README).read_text()
    assert len(text.splitlines()) <= README_LINES
    blocks = [block.text for block in graphql_blocks(ROOT / README)]
    assert any("topScores" in block for block in blocks)
    assert any("submitScore" in block for block in blocks)
