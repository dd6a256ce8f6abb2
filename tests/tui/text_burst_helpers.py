"""Keys as a laggy link delivers them: all posted at once, with no wait between them."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App

BACKSPACE = ("backspace", "\x7f")


def burst(app: App[Any], *keys: str | tuple[str, str | None]) -> None:
    """Every key posted at once, with no wait between them: text as its characters, a key
    as (name, character)."""
    for key in keys:
        if isinstance(key, tuple):
            app.post_message(events.Key(*key))
        else:
            for char in key:
                app.post_message(events.Key("space" if char == " " else char, char))
