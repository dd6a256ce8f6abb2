"""For a view that waits on a held desk (a store standing in for it waits on the test): keys sent
through the driver as a terminal sends them, and waits that let the app run meanwhile. Pilot's
`press` and `wait_until` wait for every widget to be idle, which such a view is not."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from textual import events
from textual._xterm_parser import XTermParser

from chatbot.tui import HelpDeskApp


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until `condition` holds, the app running meanwhile (not Pilot's wait: it waits for
    every widget to be idle, which a view waiting on the desk is not)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def keys(app: HelpDeskApp, *pressed: str) -> None:
    """Send keys as a terminal does (a word is its letters), without waiting for the app."""
    driver = app._driver
    assert driver is not None
    for key in pressed:
        named = key in ("enter", "escape", "ctrl+l")
        for name, character in [(key, None)] if named else [(c, c) for c in key]:
            event = events.Key("space" if name == " " else name, character)
            event.set_sender(app)
            driver.send_message(event)


def typed(app: HelpDeskApp, text: str) -> None:
    """Send `text` as a terminal (or a browser's websocket) sends it, Enter as "\r" and Ctrl+L as
    "\x0c", read into keys by Textual's own parser, without waiting for the app. (Not Escape:
    the parser waits to see whether a sequence follows it.)"""
    driver = app._driver
    assert driver is not None
    for event in XTermParser().feed(text):
        event.set_sender(app)
        driver.send_message(event)


class HeldClaim:
    """Stands in for the app's desk store: a claim waits (on the desk's thread, as on a locked
    database) until `let_claim_go`; once it has gone through, reads of the log wait until
    `let_reads_go`."""

    def __init__(self, app: HelpDeskApp) -> None:
        service = app.services.desk._service
        self._real = service.store
        self.claiming = threading.Event()
        self.reading = threading.Event()
        """Set once the claim, then a read of the log after it, waits here."""
        self._claim_gate = threading.Event()
        self._read_gate = threading.Event()
        self._claimed = threading.Event()
        service.store = self

    def let_claim_go(self) -> None:
        self._claim_gate.set()

    def let_reads_go(self) -> None:
        self._read_gate.set()

    def let_go(self) -> None:
        self.let_claim_go()
        self.let_reads_go()

    def claim(self, *args: Any, **kwargs: Any) -> Any:
        self.claiming.set()
        self._claim_gate.wait(timeout=60)
        claimed = self._real.claim(*args, **kwargs)
        self._claimed.set()
        return claimed

    def entries(self, *args: Any, **kwargs: Any) -> Any:
        if self._claimed.is_set():
            self.reading.set()
            self._read_gate.wait(timeout=60)
        return self._real.entries(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)
