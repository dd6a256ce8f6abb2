"""The "bot is working" line under the chat while a question is being judged."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, LoadingIndicator


class BotWorking(Horizontal):
    """Shown while the engine judges the customer's question; the input stays usable meanwhile."""

    def compose(self) -> ComposeResult:
        yield LoadingIndicator()
        yield Label("The bot is looking for an answer in the help center…")
