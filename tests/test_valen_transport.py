"""The app's HTTP transport: one connection per slot, at most `slots` requests at the server at
once, a pool timeout for the rest, and no slot lost to a cancelled or failed request."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from chatbot.valen.transport import SlotTransport
from tests.valen_server import Received, Reply, ValenTestServer, closed_port_url


class Counting:
    """A responder that holds each request `hold_s` and records how many it held at once."""

    def __init__(self, hold_s: float) -> None:
        self.hold_s = hold_s
        self.now = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, _received: Received, _index: int) -> Reply:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.hold_s)
        with self._lock:
            self.now -= 1
        return Reply(raw=b"{}")


def client(transport: SlotTransport, pool_s: float | None = 5.0) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(5.0, pool=pool_s))


async def test_more_requests_than_slots_all_finish_and_never_exceed_the_slots() -> None:
    server = ValenTestServer(Counting(0.05), validate=False).start()
    transport = SlotTransport(slots=3)
    try:
        async with client(transport) as http:
            replies = await asyncio.gather(
                *(http.post(server.base_url + "/decisions", content=b"{}") for _ in range(10))
            )
            assert [r.status_code for r in replies] == [200] * 10
            assert transport.in_use == 0
            assert transport.made == 3  # Reused, not one pool per request.
        assert isinstance(server.responder, Counting) and server.responder.most == 3
    finally:
        server.stop()


async def test_waiting_past_the_pool_timeout_is_a_pool_timeout_and_loses_no_slot() -> None:
    server = ValenTestServer(Counting(0.3), validate=False).start()
    transport = SlotTransport(slots=1)
    url = server.base_url + "/decisions"
    try:
        async with client(transport, pool_s=0.05) as http:
            first = asyncio.create_task(http.post(url, content=b"{}"))
            while transport.in_use == 0:  # The first request holds the only slot.
                await asyncio.sleep(0.001)
            with pytest.raises(httpx.PoolTimeout):
                await http.post(url, content=b"{}")
            waiting = asyncio.create_task(http.post(url, content=b"{}"))
            while transport.waiting == 0:
                await asyncio.sleep(0.001)
            waiting.cancel()
            assert (await first).status_code == 200
            assert transport.waiting == 0
            assert (await http.post(url, content=b"{}")).status_code == 200
            assert transport.in_use == 0 and transport.made == 1
    finally:
        server.stop()


async def test_a_failed_request_gives_its_slot_back() -> None:
    transport = SlotTransport(slots=1)
    async with client(transport) as http:
        for _ in range(3):
            with pytest.raises(httpx.ConnectError):
                await http.post(closed_port_url() + "/decisions", content=b"{}")
        assert transport.in_use == 0
