"""One line saying that the other side of a conversation is typing, until the signal lapses."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from chatbot.desk.clock import Clock

RECHECK_S = 1.0
"""How often a shown line checks whether its signal has lapsed (by the app's clock): one that
is never withdrawn (a closed tab) goes within a second of lapsing."""


class TypingLine(Static):
    """Hidden unless someone is typing; `show` with the text and until when."""

    DEFAULT_CSS = """
    TypingLine {
        height: 1;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
        display: none;
    }
    """

    def __init__(self, clock: Clock, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self._until: datetime | None = None
        self._timer: Timer | None = None

    def show(self, text: str, until: datetime | None) -> None:
        """Say `text` until `until` by the clock; None hides the line."""
        self._until = until
        if until is not None:
            self.update(Text(text))
        self._recheck()

    def _recheck(self) -> None:
        shown = self._until is not None and self._until > self.clock()
        self.display = shown
        if shown and self._timer is None:
            self._timer = self.set_interval(RECHECK_S, self._recheck)
        elif not shown and self._timer is not None:
            self._timer.stop()
            self._timer = None
