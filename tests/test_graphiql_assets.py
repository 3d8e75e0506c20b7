"""Tests for leaderboard.graphiql: the cached asset folder, the HTML page and the asset route."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from leaderboard import graphiql
from leaderboard.graphiql import (
    ASSET_FILES,
    add_graphiql_asset_route,
    ensure_graphiql_assets,
    render_graphiql_page,
)
from leaderboard.npm import fetch_package

__all__: list[str] = []

NASTY_QUERY = '{ a } # </script><script>alert("x")</script> & <!-- \u2028\u2029 </SCRIPT>'


@pytest.fixture
def cache_dir() -> Path:
    """The shared download cache, kept across test runs."""
    configured = os.environ.get("LEADERBOARD_CACHE_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[1] / ".cache"


@pytest.fixture
def assets_dir(cache_dir: Path) -> Path:
    return ensure_graphiql_assets(cache_dir)


class PageParser(HTMLParser):
    """Collects script sources, stylesheets, inline scripts and the title of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.script_sources: list[str] = []
        self.stylesheets: list[str] = []
        self.inline_scripts: list[str] = []
        self.title = ""
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script":
            source = values.get("src")
            if source is not None:
                self.script_sources.append(source)
            else:
                self.inline_scripts.append("")
            self._in = "script" if source is None else None
        elif tag == "link" and values.get("rel") == "stylesheet":
            self.stylesheets.append(values.get("href") or "")
        elif tag == "title":
            self._in = "title"

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.inline_scripts[-1] += data
        elif self._in == "title":
            self.title += data


def parse_page(page: str) -> PageParser:
    parser = PageParser()
    parser.feed(page)
    parser.close()
    return parser


def embedded_props(script: str) -> dict[str, object]:
    match = re.search(r"Object\.assign\(\{ fetcher: fetcher \}, (\{.*\})\);", script)
    assert match is not None, script
    props = json.loads(match.group(1))
    assert isinstance(props, dict)
    return props


def test_assets_folder_holds_exactly_the_four_files(assets_dir: Path, cache_dir: Path) -> None:
    assert sorted(p.name for p in assets_dir.iterdir()) == sorted(ASSET_FILES)
    for name, (package, inner) in ASSET_FILES.items():
        served = (assets_dir / name).read_bytes()
        assert len(served) > 1000, name
        assert served == (fetch_package(package, cache_dir) / inner).read_bytes()
    assert b".GraphiQL=" in (assets_dir / "graphiql.min.js").read_bytes()
    assert b".graphiql-container" in (assets_dir / "graphiql.min.css").read_bytes()


def test_assets_folder_is_reused(
    assets_dir: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mtimes = {p.name: p.stat().st_mtime_ns for p in assets_dir.iterdir()}

    def no_fetch(*args: object) -> Path:
        raise AssertionError("a complete asset folder must not fetch again")

    monkeypatch.setattr(graphiql, "fetch_package", no_fetch)

    assert ensure_graphiql_assets(cache_dir) == assets_dir
    assert {p.name: p.stat().st_mtime_ns for p in assets_dir.iterdir()} == mtimes


def test_incomplete_assets_folder_is_rebuilt(cache_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    # Reuse the shared npm downloads through a symlink so no network is needed.
    cache.mkdir()
    (cache / "npm").symlink_to(ensure_graphiql_assets(cache_dir).parents[1] / "npm")
    first = ensure_graphiql_assets(cache)
    (first / "graphiql.min.css").unlink()

    again = ensure_graphiql_assets(cache)

    assert again == first
    assert sorted(p.name for p in again.iterdir()) == sorted(ASSET_FILES)
    assert sorted(p.name for p in again.parent.iterdir()) == [again.name]


def test_page_loads_the_four_assets_and_mounts_graphiql() -> None:
    page = render_graphiql_page(endpoint="/graphql", default_query="{ leaderboards { id } }")
    parsed = parse_page(page)

    assert page.startswith("<!doctype html>")
    assert page.rstrip().endswith("</html>")
    assert parsed.title == "Leaderboard GraphQL"
    assert parsed.stylesheets == ["/graphiql/assets/graphiql.min.css"]
    assert parsed.script_sources == [
        "/graphiql/assets/react.production.min.js",
        "/graphiql/assets/react-dom.production.min.js",
        "/graphiql/assets/graphiql.min.js",
    ]
    assert {Path(u).name for u in parsed.script_sources + parsed.stylesheets} == set(ASSET_FILES)
    assert all("//" not in url for url in parsed.script_sources + parsed.stylesheets)
    [script] = parsed.inline_scripts
    assert 'GraphiQL.createFetcher({ url: "/graphql" })' in script
    assert "React.createElement(GraphiQL, props)" in script
    assert embedded_props(script) == {
        "defaultQuery": "{ leaderboards { id } }",
        "defaultEditorToolsVisibility": True,
    }


def test_page_sets_default_headers_when_given() -> None:
    headers = '{"Authorization": "Bearer <token>"}'
    page = render_graphiql_page(endpoint="/graphql", default_query="{ a }", default_headers=headers)

    [script] = parse_page(page).inline_scripts
    assert embedded_props(script)["defaultHeaders"] == headers
    assert "<token>" not in page


def test_page_escapes_script_breakouts() -> None:
    page = render_graphiql_page(
        endpoint="/graphql?x=</script>",
        default_query=NASTY_QUERY,
        default_headers='{"X-Test": "</script><b>"}',
        asset_prefix="/static/",
    )

    assert "</script><script>" not in page
    assert "</SCRIPT>" not in page
    assert "<!--" not in page
    assert "\u2028" not in page
    assert "\u2029" not in page
    assert page.lower().count("</script>") == 4
    parsed = parse_page(page)
    assert parsed.script_sources[0] == "/static/react.production.min.js"
    [script] = parsed.inline_scripts
    props = embedded_props(script)
    assert props["defaultQuery"] == NASTY_QUERY
    assert props["defaultHeaders"] == '{"X-Test": "</script><b>"}'
    assert r'url: "/graphql?x=\u003c/script\u003e"' in script


def make_app(assets_dir: Path, prefix: str | None = None) -> web.Application:
    app = web.Application()
    if prefix is None:
        add_graphiql_asset_route(app, assets_dir)
    else:
        add_graphiql_asset_route(app, assets_dir, prefix)
    return app


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("graphiql.min.js", "text/javascript"),
        ("react.production.min.js", "text/javascript"),
        ("react-dom.production.min.js", "text/javascript"),
        ("graphiql.min.css", "text/css"),
    ],
)
async def test_route_serves_each_asset(assets_dir: Path, name: str, content_type: str) -> None:
    async with TestClient(TestServer(make_app(assets_dir))) as client:
        response = await client.get(f"/graphiql/assets/{name}")
        body = await response.read()

    assert response.status == 200
    assert response.content_type == content_type
    assert response.charset == "utf-8"
    assert response.headers["Cache-Control"] == "public, max-age=86400"
    assert body == (assets_dir / name).read_bytes()


async def test_every_url_of_the_page_is_served(assets_dir: Path) -> None:
    parsed = parse_page(render_graphiql_page(endpoint="/graphql", default_query="{ a }"))

    async with TestClient(TestServer(make_app(assets_dir))) as client:
        for url in parsed.script_sources + parsed.stylesheets:
            response = await client.get(url)
            assert response.status == 200, url
            assert len(await response.read()) > 1000, url


async def test_route_honours_a_custom_prefix(assets_dir: Path) -> None:
    async with TestClient(TestServer(make_app(assets_dir, "/ui/"))) as client:
        served = await client.get("/ui/graphiql.min.css")
        default = await client.get("/graphiql/assets/graphiql.min.css")

    assert served.status == 200
    assert default.status == 404


@pytest.mark.parametrize(
    "path",
    [
        "/graphiql/assets/../pyproject.toml",
        "/graphiql/assets/..%2Fpyproject.toml",
        "/graphiql/assets/..%2F..%2Fpyproject.toml",
        "/graphiql/assets/%2E%2E/%2E%2E/pyproject.toml",
        "/graphiql/assets/graphiql.min.js.map",
        "/graphiql/assets/unknown.js",
        "/graphiql/assets/",
        "/graphiql/assets/sub/graphiql.min.js",
    ],
)
async def test_route_refuses_other_paths(tmp_path: Path, path: str) -> None:
    # A file one and two levels above the assets folder, which a traversal bug would leak.
    assets = tmp_path / "site" / "assets"
    assets.mkdir(parents=True)
    for name in ASSET_FILES:
        (assets / name).write_text(f"/* {name} */", encoding="utf-8")
    (assets / "graphiql.min.js.map").write_text("{}", encoding="utf-8")
    (tmp_path / "site" / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[project]\n", encoding="utf-8")

    async with TestClient(TestServer(make_app(assets))) as client:
        response = await client.get(path)
        body = await response.read()

    assert response.status == 404
    assert b"[project]" not in body
    assert b"/*" not in body


async def test_route_refuses_a_name_when_the_folder_has_extra_files(tmp_path: Path) -> None:
    for name in ASSET_FILES:
        (tmp_path / name).write_text(f"/* {name} */", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")

    async with TestClient(TestServer(make_app(tmp_path))) as client:
        secret = await client.get("/graphiql/assets/secret.txt")
        css = await client.get("/graphiql/assets/graphiql.min.css")
        css_body = await css.text()

    assert secret.status == 404
    assert css.status == 200
    assert css_body == "/* graphiql.min.css */"


def test_route_needs_a_complete_folder(tmp_path: Path) -> None:
    (tmp_path / "graphiql.min.js").write_text("x", encoding="utf-8")

    with pytest.raises(FileNotFoundError, match="ensure_graphiql_assets"):
        add_graphiql_asset_route(web.Application(), tmp_path)
