"""The aiohttp half of `chatbot.valen.transport`, imported on the first request only (importing
aiohttp costs ~110 ms, which replay mode, sending no request, should never pay).

`httpx_aiohttp.AiohttpTransport` does the HTTP; here is how its aiohttp session is built and how
aiohttp's errors become the httpx errors httpcore would have raised for the same failure.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from chatbot.valen.trust import verifying_context

# Most specific first; the first match wins. httpx-aiohttp 0.2's own map lets the broad
# ClientConnectionError win over ClientConnectorError, so a refused or dropped connection comes
# out as `httpx.ConnectTimeout` (a timeout, to every caller), and it passes aiohttp's errors for a
# malformed reply (ClientResponseError) through unmapped: this map replaces it.
_HTTPX_ERRORS: tuple[tuple[type[aiohttp.ClientError], type[Exception]], ...] = (
    # aiohttp's `connect` timeout spans waiting for a free connection and opening one.
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),  # SocketTimeoutError: the read timeout.
    (aiohttp.ClientConnectorError, httpx.ConnectError),  # Refused, DNS, TLS handshake.
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),  # Closed before a reply.
    (aiohttp.ClientPayloadError, httpx.RemoteProtocolError),  # Body cut short or malformed.
    (aiohttp.NonHttpUrlClientError, httpx.UnsupportedProtocol),
    (aiohttp.InvalidURL, httpx.InvalidURL),  # One httpx let through, such as port 99999.
    (aiohttp.ClientOSError, httpx.ReadError),  # Reset in the middle of an exchange.
    (aiohttp.ClientConnectionError, httpx.NetworkError),
    (aiohttp.ClientError, httpx.RemoteProtocolError),  # A status line or headers aiohttp refused.
)


def _closed_early(error: aiohttp.ClientError) -> str | None:
    """httpcore's words when the server closed the connection before its reply was complete (the
    Valen client tells a server that closed from one never reached by them): before the status
    line or the headers were done, or in the middle of the body (the payload error aiohttp raises
    when the connection is lost, as opposed to one for a malformed body). None otherwise."""
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return "Server disconnected without sending a response."
    if isinstance(error, aiohttp.ClientPayloadError) and "not completed" in str(error):
        return f"peer closed connection without sending complete message body ({error})"
    return None


def httpx_error(error: aiohttp.ClientError) -> Exception:
    """The httpx error for an aiohttp one, its message kept (aiohttp's never holds the request's
    headers; the Valen client reports only the type anyway)."""
    if (closed := _closed_early(error)) is not None:
        return httpx.RemoteProtocolError(closed)
    for source, target in _HTTPX_ERRORS:
        if isinstance(error, source):
            return target(str(error) or type(error).__name__)
    raise AssertionError("unreachable: aiohttp.ClientError is in the map")


@contextmanager
def httpx_errors() -> Iterator[None]:
    """Re-raise aiohttp's errors, raw or as httpx-aiohttp mapped them, as the right httpx ones."""
    try:
        yield
    except aiohttp.ClientError as error:
        raise httpx_error(error) from error
    except httpx.TransportError as error:
        if not isinstance(error.__cause__, aiohttp.ClientError):
            raise
        raise httpx_error(error.__cause__) from error.__cause__


def ssl_context(verify: ssl.SSLContext | bool) -> ssl.SSLContext:
    """The context a transport verifies servers with: the default one is the process's shared
    `trust.verifying_context` (made once: loading the CA bundle costs ~20 ms of CPU)."""
    if verify is True:
        return verifying_context()
    return httpx.create_ssl_context(verify=verify)


def make_transport(
    *, max_connections: int, keepalive_expiry: float, verify: ssl.SSLContext | bool
) -> AiohttpTransport:
    """httpx-aiohttp's transport over one session whose connector opens at most `max_connections`
    connections (more requests wait, first come first served, for at most the request's pool
    timeout) and keeps idle ones `keepalive_expiry` seconds."""
    context = ssl_context(verify)

    def session() -> aiohttp.ClientSession:
        # Made on the first request, inside the running event loop, as aiohttp wants.
        connector = aiohttp.TCPConnector(
            limit=max_connections,
            limit_per_host=0,
            keepalive_timeout=keepalive_expiry,
            ssl=context,
        )
        return aiohttp.ClientSession(
            connector=connector,
            # httpx keeps the client's cookies; a second jar here would send them twice.
            cookie_jar=aiohttp.DummyCookieJar(),
            # The Valen client decodes the raw body itself, counting decoded bytes against its
            # cap; httpx-aiohttp asks for raw bodies per request too, this makes it the default.
            auto_decompress=False,
        )

    return AiohttpTransport(verify=context, client=session)
