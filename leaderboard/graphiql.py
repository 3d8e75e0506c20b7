"""GraphiQL served entirely by the service: pinned npm assets, the HTML page and their route.

The four browser files (React, ReactDOM, GraphiQL's script and stylesheet) are fetched once
from npm into the cache, copied into one folder and served from there, so the page needs no
CDN and no internet access at run time.
"""

from __future__ import annotations

import hashlib
import html
import json
import shutil
import tempfile
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from aiohttp import web

from leaderboard.headers import graphiql_csp, new_nonce
from leaderboard.npm import FetchError, NpmPackage, fetch_package

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "ASSET_CONTENT_TYPES",
    "ASSET_FILES",
    "ASSET_PREFIX",
    "DEFAULT_QUERY",
    "GRAPHIQL",
    "PAGE_TITLE",
    "REACT",
    "REACT_DOM",
    "add_graphiql_asset_route",
    "assets_key",
    "ensure_graphiql_assets",
    "graphiql_page",
    "render_graphiql_page",
]

GRAPHIQL = NpmPackage(
    "graphiql",
    "3.9.0",
    "sha512-rJYFlHdBbug9+YbFSwRVvgfPjCayC7wHecZkx/qB4XLuQPFQZw/yB9pmHFtOJV6RiNBBHro3u1GdocKa3YcGRA==",
)
REACT = NpmPackage(
    "react",
    "18.3.1",
    "sha512-wS+hAgJShR0KhEvPJArfuPVN1+Hz1t0Y6n5jLrGQbkb4urgPE/0Rve+1kMB1v/oWgHgm4WIcV+i7F2pTVj+2iQ==",
)
REACT_DOM = NpmPackage(
    "react-dom",
    "18.3.1",
    "sha512-5m4nQKp+rZRb09LNH59GM4BxTh9251/ylbKIbpe7TpGxfJ+9kv6BLkLBXIjjspbgbnIBNqlI23tRnTWT0snUIw==",
)

ASSET_FILES: Mapping[str, tuple[NpmPackage, str]] = MappingProxyType(
    {
        "react.production.min.js": (REACT, "umd/react.production.min.js"),
        "react-dom.production.min.js": (REACT_DOM, "umd/react-dom.production.min.js"),
        "graphiql.min.js": (GRAPHIQL, "graphiql.min.js"),
        "graphiql.min.css": (GRAPHIQL, "graphiql.min.css"),
    }
)
"""Served file name -> (npm package, path inside its ``package/`` folder)."""

ASSET_CONTENT_TYPES: Mapping[str, str] = MappingProxyType(
    {
        ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
    }
)
ASSET_PREFIX = "/graphiql/assets"
PAGE_TITLE = "Leaderboard GraphQL"
DEFAULT_QUERY = """\
# Top 10 of the demo board, with ranks and player names.
# Run it with the play button or Ctrl-Enter.
query TopTen {
  leaderboard(id: "global") {
    name
    entryCount
    topScores(first: 10) {
      edges {
        node {
          rank
          score
          attainedAt
          player { id name }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}
"""
"""The document the page opens with."""
_CACHE_CONTROL = "public, max-age=86400"
_SCRIPT_ORDER = ("react.production.min.js", "react-dom.production.min.js", "graphiql.min.js")
_STYLESHEET = "graphiql.min.css"


def ensure_graphiql_assets(cache_dir: Path) -> Path:
    """Return a folder holding exactly the files of :data:`ASSET_FILES`, fetching as needed.

    The folder's name depends on the pinned packages, so changing a pin yields a new folder.
    It is built beside its final place and renamed in one step, so a folder that exists is
    complete. Raises :class:`~leaderboard.npm.FetchError` when a package cannot be fetched.
    """
    target = cache_dir.absolute() / "graphiql" / assets_key()
    if _is_complete(target):
        return target
    sources = {
        name: fetch_package(package, cache_dir) / inner
        for name, (package, inner) in ASSET_FILES.items()
    }
    for name, source in sources.items():
        if not source.is_file():
            package = ASSET_FILES[name][0]
            raise FetchError(
                f"{package.spec} has no file {ASSET_FILES[name][1]}; the pin in "
                "leaderboard.graphiql.ASSET_FILES does not match the package."
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        for name, source in sources.items():
            shutil.copyfile(source, staging / name)
        staging.chmod(0o755)
        for _ in range(2):
            try:
                staging.rename(target)
            except OSError as exc:
                if _is_complete(target):
                    return target  # another process finished first; ours is discarded
                if not target.exists():
                    raise FetchError(
                        f"could not move the GraphiQL files into {target}: {exc}; "
                        "make sure the cache folder is writable and retry."
                    ) from exc
                _remove_tree(target)
            else:
                return target
        raise FetchError(
            f"{target} keeps reappearing incomplete while the GraphiQL files are being "
            "installed; delete it and retry."
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def render_graphiql_page(
    *,
    endpoint: str,
    default_query: str,
    default_headers: str = "",
    asset_prefix: str = ASSET_PREFIX,
    nonce: str = "",
) -> str:
    """Return the complete GraphiQL HTML page for the GraphQL ``endpoint``.

    The page loads its files from ``asset_prefix`` on the same server. ``default_query`` and
    ``default_headers`` (JSON text for the headers editor, left out when empty) are embedded
    as escaped JSON, so no value can end the surrounding ``<script>`` element. With a
    ``nonce``, the inline script and style carry it (see :func:`graphiql_page`).
    """
    nonced = f' nonce="{html.escape(nonce)}"' if nonce else ""
    prefix = asset_prefix.rstrip("/")
    props: dict[str, object] = {
        "defaultQuery": default_query,
        "defaultEditorToolsVisibility": True,
    }
    if default_headers:
        props["defaultHeaders"] = default_headers
    scripts = "\n".join(
        f'    <script src="{html.escape(f"{prefix}/{name}")}"></script>' for name in _SCRIPT_ORDER
    )
    stylesheet = html.escape(f"{prefix}/{_STYLESHEET}")
    return f"""<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{html.escape(PAGE_TITLE)}</title>
    <link rel="stylesheet" href="{stylesheet}">
    <style{nonced}>
      html, body {{ height: 100%; margin: 0; overflow: hidden; }}
      #graphiql {{ height: 100vh; }}
    </style>
  </head>
  <body>
    <div id="graphiql">Loading GraphiQL…</div>
{scripts}
    <script{nonced}>
      const fetcher = GraphiQL.createFetcher({{ url: {_script_json(endpoint)} }});
      const props = Object.assign({{ fetcher: fetcher }}, {_script_json(props)});
      ReactDOM.createRoot(document.getElementById("graphiql")).render(
        React.createElement(GraphiQL, props)
      );
    </script>
  </body>
</html>
"""


def graphiql_page(*, endpoint: str, default_query: str) -> Callable[[], web.Response]:
    """The GraphiQL page's responses: each a fresh page whose inline script and style carry
    a nonce of its own, under a Content-Security-Policy that lets only them run inline."""

    def respond() -> web.Response:
        nonce = new_nonce()
        return web.Response(
            text=render_graphiql_page(endpoint=endpoint, default_query=default_query, nonce=nonce),
            content_type="text/html",
            headers={"Content-Security-Policy": graphiql_csp(nonce)},
        )

    return respond


def add_graphiql_asset_route(
    app: web.Application, assets_dir: Path, prefix: str = ASSET_PREFIX
) -> None:
    """Serve the files of :data:`ASSET_FILES` from ``assets_dir`` at ``prefix/<name>``.

    Only those names are served (anything else is 404), with their content type and a
    one-day ``Cache-Control``. Raises :class:`FileNotFoundError` when ``assets_dir`` lacks one
    of them; :func:`ensure_graphiql_assets` builds such a folder.
    """
    missing = [name for name in ASSET_FILES if not (assets_dir / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{assets_dir} lacks {', '.join(missing)}; build it with ensure_graphiql_assets()."
        )
    files = {name: (assets_dir / name).resolve() for name in ASSET_FILES}

    async def serve_asset(request: web.Request) -> web.StreamResponse:
        path = files.get(request.match_info["name"])
        if path is None:
            raise web.HTTPNotFound()
        headers = {
            "Content-Type": ASSET_CONTENT_TYPES[path.suffix],
            "Cache-Control": _CACHE_CONTROL,
        }
        return web.FileResponse(path, headers=headers)

    app.router.add_get(f"{prefix.rstrip('/')}/{{name}}", serve_asset, name="graphiql-asset")


def assets_key() -> str:
    """A name for the pinned asset set: it changes whenever a pin or a file mapping does."""
    pins = sorted(
        (name, package.name, package.version, package.integrity, inner)
        for name, (package, inner) in ASSET_FILES.items()
    )
    digest = hashlib.sha256(json.dumps(pins).encode()).hexdigest()[:16]
    return f"{GRAPHIQL.name}-{GRAPHIQL.version}-{digest}"


def _is_complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in ASSET_FILES)


def _remove_tree(folder: Path) -> None:
    """Move an incomplete folder aside, then delete it."""
    trash = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".trash", dir=folder.parent))
    try:
        folder.rename(trash / "old")
    except FileNotFoundError:
        pass
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def _script_json(value: object) -> str:
    """Encode ``value`` as JSON that is safe inside an HTML ``<script>`` element."""
    return (
        json.dumps(value, ensure_ascii=False)
        .replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
