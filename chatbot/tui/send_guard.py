"""One rule for every box that sends what is typed in it on Enter: a double Enter sends once."""

from __future__ import annotations

from textual.widgets import Input


class SendGuard:
    """Both presses of a quick double Enter (a slow connection to a browser, an impatient key)
    reach a box before the first is handled, and each `Submitted` carries what the box held when
    it was pressed. The second is stale once the first has been sent: the box holds something
    else by then (nothing, or after a note the reply's draft), and its words must not go again.
    Enter on the box a send has just emptied asks for nothing either, so it gets no hint."""

    def __init__(self) -> None:
        self._emptied = False

    def stale(self, event: Input.Submitted) -> bool:
        """Whether `event` is to be dropped."""
        return event.value != event.input.value or (self._emptied and not event.value)

    def sent(self) -> None:
        """What the box held was sent, and the box emptied."""
        self._emptied = True

    def edited(self, value: str) -> None:
        """The box changed; something typed in it makes Enter a request again."""
        if value:
            self._emptied = False
