"""Security headers on every response, and a server name without versions."""

from __future__ import annotations

import secrets

from aiohttp import web, web_response

__all__ = [
    "API_CSP",
    "SECURITY_HEADERS",
    "SERVER_NAME",
    "add_security_headers",
    "graphiql_csp",
    "new_nonce",
]

SERVER_NAME = "leaderboard"
"""The Server header of every response: no product versions to look vulnerabilities up by."""

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
"""Set on every response the application makes."""

API_CSP = "default-src 'none'; frame-ancestors 'none'"
"""The policy of every response but the GraphiQL page: nothing it could contain may load or
run anything, nor be framed."""


def graphiql_csp(nonce: str) -> str:
    """The GraphiQL page's policy: its scripts and styles come from this server, its inline
    script and style run only with the response's nonce; it talks to this origin only (HTTP
    and WebSocket); it cannot be framed."""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self' 'nonce-{nonce}'",
            f"style-src 'self' 'nonce-{nonce}'",
            "connect-src 'self'",
            "img-src 'self' data:",
            "font-src 'self' data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )


def new_nonce() -> str:
    """A fresh CSP nonce: 128 random bits, URL-safe base64."""
    return secrets.token_urlsafe(16)


async def _on_response_prepare(_: web.Request, response: web.StreamResponse) -> None:
    headers = response.headers
    headers["Server"] = SERVER_NAME
    for name, value in SECURITY_HEADERS.items():
        headers.setdefault(name, value)
    headers.setdefault("Content-Security-Policy", API_CSP)


def add_security_headers(app: web.Application) -> None:
    """Give every response of ``app`` the security headers and the bare server name (a
    response that sets its own Content-Security-Policy keeps it). The answers aiohttp makes
    before a request reaches an application (a malformed request line or header) name the
    server without versions too."""
    app.on_response_prepare.append(_on_response_prepare)
    # aiohttp fills in the Server header from this module attribute when a response has none.
    setattr(web_response, "SERVER_SOFTWARE", SERVER_NAME)  # noqa: B010
