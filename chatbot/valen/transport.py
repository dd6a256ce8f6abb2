"""An httpx transport that keeps each connection in a pool of its own.

httpcore's connection pool rescans every connection (and polls every idle socket) for each
request it queues or releases, so its cost per request grows with the number of connections:
with 250 requests in flight to one host (50 questions at k=5) bare httpx spent 7-23 ms of CPU per
request here, against ~0.8 ms with a handful of connections. This transport hands each request a
single-connection httpcore pool of its own from a free list, so every pool scan sees one
connection, and keeps at most `slots` of them: that is the in-flight cap. Requests beyond it
wait for a slot, first come first served, for at most the request's pool timeout.

Everything HTTP is still httpx and httpcore; only the choice of connection is made here.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import AsyncIterator, Callable

import httpx


class _Releasing(httpx.AsyncByteStream):
    """The response body; closing it gives the slot back."""

    def __init__(self, stream: httpx.AsyncByteStream, release: Callable[[], None]) -> None:
        self._stream = stream
        self._release: Callable[[], None] | None = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            if self._release is not None:
                release, self._release = self._release, None
                release()


class SlotTransport(httpx.AsyncBaseTransport):
    """Up to `slots` single-connection pools, made as needed and reused most-recent first (the
    connection most likely still open). Idle connections are kept 30 s (httpx keeps 5): customers'
    questions come in bursts, and a new TLS connection to the hosted API costs a handshake."""

    def __init__(
        self,
        *,
        slots: int,
        verify: ssl.SSLContext | bool = True,
        keepalive_expiry: float = 30.0,
    ) -> None:
        if slots < 1:
            raise ValueError("a transport needs at least one slot")
        self.slots = slots
        # One SSL context for every slot: making one loads the CA bundle (~20 ms).
        self._verify = httpx.create_ssl_context(verify=verify) if verify is True else verify
        self._limits = httpx.Limits(
            max_connections=1, max_keepalive_connections=1, keepalive_expiry=keepalive_expiry
        )
        self._made: list[httpx.AsyncHTTPTransport] = []
        self._idle: list[httpx.AsyncHTTPTransport] = []
        self._waiting: deque[asyncio.Future[httpx.AsyncHTTPTransport]] = deque()

    @property
    def in_use(self) -> int:
        """Slots serving a request now."""
        return len(self._made) - len(self._idle)

    @property
    def made(self) -> int:
        """Slots made so far (each holds at most one connection)."""
        return len(self._made)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot."""
        return sum(1 for waiter in self._waiting if not waiter.done())

    async def _acquire(self, timeout: float | None) -> httpx.AsyncHTTPTransport:
        if self._idle:
            return self._idle.pop()
        if len(self._made) < self.slots:
            made = httpx.AsyncHTTPTransport(verify=self._verify, limits=self._limits)
            self._made.append(made)
            return made
        waiter: asyncio.Future[httpx.AsyncHTTPTransport] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiting.append(waiter)
        try:
            async with asyncio.timeout(timeout):
                return await waiter
        except BaseException as error:
            if waiter.done() and not waiter.cancelled():
                # Handed a slot just as we timed out or were cancelled: pass it on.
                self._release(waiter.result())
            else:
                waiter.cancel()
            if isinstance(error, TimeoutError):
                raise httpx.PoolTimeout("no free connection slot in time") from None
            raise

    def _release(self, transport: httpx.AsyncHTTPTransport) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(transport)
                return
        self._idle.append(transport)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        transport = await self._acquire(timeouts.get("pool"))
        try:
            response = await transport.handle_async_request(request)
        except BaseException:
            self._release(transport)
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Releasing(response.stream, lambda: self._release(transport)),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        for transport in self._made:
            await transport.aclose()
