"""The customer's conversation, scrolling: a key typed on it is meant for the question box."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.containers import VerticalScroll
from textual.message import Message


class ChatLog(VerticalScroll):
    """The bubbles of one conversation. A customer who clicked it (in a browser, the first thing
    most do) and starts typing means the question box: each printable key is sent on as `Typed`.

    The key is judged here, where Textual sends it because the log had the focus, and not by
    where the focus is when it is handled: the first key of a quick burst moves the focus to the
    question box while the rest are still on their way to the log."""

    @dataclass
    class Typed(Message):
        """A character typed on the log (or another part of the chat that takes no text)."""

        character: str

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(event.character))

    def anchor(self, anchor: bool = True) -> None:
        super().anchor(anchor)
        if not anchor:
            # Anchored, a log that does not fill the pane is drawn at its bottom: Textual scrolls
            # it to a negative offset, which stayed once let go. Cleared and refilled (a switch of
            # language), its entries were drawn that many rows down, blank rows above them, the
            # newest below the fold, with no scrollbar to reach it.
            self.scroll_to(
                y=max(self.scroll_y, 0),
                animate=False,
                immediate=True,
                force=True,  # Also where it does not overflow, and so has no scrolling.
                release_anchor=False,
            )

    def on_resize(self, _event: events.Resize) -> None:
        # The chat follows its newest entry once it overflows (anchored), not before. A window
        # made smaller (a phone's keyboard opening, a split screen) could make it overflow with
        # no new entry to anchor it, and the answer went below the fold; one made larger (a
        # phone turned to landscape) leaves it from the top again, as a chat that never
        # overflowed is. One the customer has scrolled back in is anchored, and left where they
        # are.
        self.call_after_refresh(self._follow_if_overflowing)

    def _follow_if_overflowing(self) -> None:
        if self.max_scroll_y > 0 and not self.is_anchored:
            self.anchor()
        elif self.max_scroll_y == 0 and self.is_anchored:
            self.anchor(False)
