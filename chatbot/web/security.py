"""Headers every response carries, and which origins may drive the desk.

The policy allows scripts only from this server's own files (textual.js is served as a file, and
no page holds an inline script), connections only back to this server (the app's websocket), and
no framing. Styles allow 'unsafe-inline' for one reason: the terminal renderer inside textual.js
(xterm.js) sizes its canvas through `<style>` elements it writes at run time. Inline styles cannot
run code, so this does not reopen script injection.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "font-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ]
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Not "no-referrer": under it browsers send `Origin: null` even on our own form posts, and
    # the Origin check would refuse every sign-in.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("0.0.0.0", "::", "")


async def add_security_headers(_request: web.Request, response: web.StreamResponse) -> None:
    """On every response, static files, errors and websocket handshakes included."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers["Server"] = "helpdesk"  # Not which aiohttp and Python versions run it.


async def add_hsts(_request: web.Request, response: web.StreamResponse) -> None:
    """Behind an https public URL: browsers use https for a year, whatever link they follow."""
    response.headers.setdefault("Strict-Transport-Security", "max-age=31536000")


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, lower case, without a default port."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def allowed_origins(*, host: str, port: int, public_url: str | None) -> frozenset[str]:
    """The origins whose pages may sign in and open websockets: the public URL, loopback on our
    port, and the address we listen on when it is a specific one. A fixed list, not "whatever
    the Host header says", so a DNS-rebinding page on another name is refused too."""
    origins = {origin_of(f"http://{name}:{port}") for name in LOOPBACK_NAMES}
    if host not in WILDCARDS and host not in ("127.0.0.1", "localhost", "::1"):
        bracketed = f"[{host}]" if ":" in host else host
        origins.add(origin_of(f"http://{bracketed}:{port}"))
    if public_url:
        origins.add(origin_of(public_url))
    return frozenset(origins)


def origin_allowed(request: web.Request, allowed: frozenset[str]) -> bool:
    """A request from a page of ours: its `Origin` is one of `allowed`. Browsers always send
    `Origin` on websocket handshakes and form POSTs; a request without one is refused."""
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        return False
    try:
        return origin_of(origin) in allowed
    except ValueError:  # A port that is not a number, or out of range.
        return False
