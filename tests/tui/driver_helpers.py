"""For a view that waits on a held desk (a store standing in for it waits on the test): keys sent
through the driver as a terminal sends them, and waits that let the app run meanwhile. Pilot's
`press` and `wait_until` wait for every widget to be idle, which such a view is not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

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
