"""The app's HTTP transport for Valen: httpx on top, aiohttp's connection pool underneath.

httpcore's pool rescans every connection (and polls every idle socket) for each request it queues
or releases, so its CPU cost per request grows with the connections open: with 250 requests in
flight to one host (50 questions at k=5) bare httpx spent 7-23 ms of CPU per request here.
aiohttp's connector does not, and `httpx-aiohttp` (what the OpenAI SDK offers for the same
reason) plugs it in under `httpx.AsyncClient`, so the client above it (timeouts, streaming,
errors) is unchanged. See bench/README.md for the figures.

What this module adds to httpx-aiohttp:

- It starts on the first request: aiohttp is imported and its session made then, so replay mode,
  which never sends a request, never imports aiohttp (~110 ms of start-up).
- Every aiohttp failure is raised as the httpx error httpcore would raise for it (a refused
  connection is `ConnectError`, not httpx-aiohttp's `ConnectTimeout`), while sending and while
  the body streams.
- Credentials in the URL are sent as httpx sends them, as basic auth, and not also in the URL,
  which aiohttp refuses.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager

import httpx


class _Mapped(httpx.AsyncByteStream):
    """A response body whose read errors are httpx's."""

    def __init__(
        self, stream: httpx.AsyncByteStream, errors: Callable[[], AbstractContextManager[None]]
    ) -> None:
        self._stream = stream
        self._errors = errors

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with self._errors():
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        with self._errors():
            await self._stream.aclose()


class ValenTransport(httpx.AsyncBaseTransport):
    """At most `max_connections` connections, so at most that many requests at the server at
    once; requests beyond it wait for a free connection, first come first served, for at most the
    request's pool timeout. Idle connections are kept 30 s (httpx keeps 5): customers' questions
    come in bursts, and a new TLS connection to the hosted API costs a handshake."""

    def __init__(
        self,
        *,
        max_connections: int,
        keepalive_expiry: float = 30.0,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        if max_connections < 1:
            raise ValueError("a transport needs at least one connection")
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self._verify = verify
        self._inner: httpx.AsyncBaseTransport | None = None
        self._errors: Callable[[], AbstractContextManager[None]] | None = None

    @property
    def started(self) -> bool:
        """Whether aiohttp is imported and the pool built: by `start`, or the first request."""
        return self._inner is not None

    def start(self) -> None:
        """Import aiohttp and build the pool now instead of on the first request, for a caller
        that times that request (`helpdesk valen check`): its time is then the request's own,
        not ~110 ms of import and CA bundle loading too."""
        if self._inner is None:
            self._start()

    def _start(self) -> tuple[httpx.AsyncBaseTransport, Callable[[], AbstractContextManager[None]]]:
        from chatbot.valen import _aiohttp  # Here, not at the top: see the module docstring.

        self._inner = _aiohttp.make_transport(
            max_connections=self.max_connections,
            keepalive_expiry=self.keepalive_expiry,
            verify=self._verify,
        )
        self._errors = _aiohttp.httpx_errors
        return self._inner, self._errors

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._inner is None or self._errors is None:
            inner, errors = self._start()
        else:
            inner, errors = self._inner, self._errors
        if request.url.userinfo:
            # httpx has already turned them into an authorization header.
            request.url = request.url.copy_with(username=None, password=None)
        with errors():
            response = await inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Mapped(response.stream, errors)
        return response

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
