"""For the deadline tests of `helpdesk valen check`: a reply that trickles, and a clock whose
timeouts end when the test says."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from chatbot.valen.client import SystemClock
from tests.valen_server import Reply


class Trickle:
    """A 200 whose body stops after its first byte until `release` (each read of it would be
    within any read timeout, as a server sending a byte a second is): `sent` once that byte is
    out, `then` called there too."""

    def __init__(self, then: Callable[[], None] = lambda: None) -> None:
        self.sent = threading.Event()
        self.release = threading.Event()
        self.then = then

    def chunks(self) -> Iterator[bytes]:
        yield b"{"
        self.sent.set()
        self.then()
        self.release.wait(30)
        yield b'"answers": [{"type": "predicate", "name": "answers", "probability": 0.9}]}'

    def reply(self) -> Reply:
        return Reply(chunks=self.chunks)


def use_clock(monkeypatch: pytest.MonkeyPatch, clock: Any) -> None:
    """Every Valen client made from here on keeps time on `clock`."""
    monkeypatch.setattr("chatbot.valen.client.SystemClock", lambda: clock)


class ExpiringClock(SystemClock):
    """The real clock, except that its timeouts end when `expire` is called (from any thread), so
    a budget runs out at a point the test chooses, never by waiting for it."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._timers: list[tuple[asyncio.AbstractEventLoop, asyncio.Timeout]] = []

    @asynccontextmanager
    async def timeout(self, seconds: float) -> AsyncIterator[None]:
        self.asked.append(seconds)
        async with asyncio.timeout(None) as timer:
            entry = (asyncio.get_running_loop(), timer)
            self._timers.append(entry)
            try:
                yield
            finally:
                self._timers.remove(entry)

    def expire(self) -> int:
        """End every timeout now open; how many there were."""
        timers = list(self._timers)
        for loop, timer in timers:
            loop.call_soon_threadsafe(self._end, loop, timer)
        return len(timers)

    def _end(self, loop: asyncio.AbstractEventLoop, timer: asyncio.Timeout) -> None:
        if (loop, timer) in self._timers and not timer.expired():  # Its block still open.
            timer.reschedule(loop.time())
