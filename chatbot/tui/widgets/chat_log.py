"""The customer's conversation, scrolling: a key typed on it is meant for the question box."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.containers import VerticalScroll
from textual.message import Message

EDITING_KEYS = frozenset(
    (
        "backspace",
        "delete",
        "ctrl+d",
        "ctrl+w",
        "ctrl+u",
        "super+backspace",
        "ctrl+k",
        "ctrl+backspace",
        "alt+backspace",
    )
)
"""The question box's keys that delete its text, sent on to it in turn with the characters: left
to its binding, a key runs where the focus is once the key has passed every widget up to the app,
and the characters typed after it on the log had moved the focus to the box by then. Ctrl+U and a
question typed at once left an empty box: the question went in, then Ctrl+U took it out. (The
log's own keys, arrows, Home, End and the page keys, stay the log's: they scroll it.)"""


class ChatLog(VerticalScroll):
    """The bubbles of one conversation. A customer who clicked it (in a browser, the first thing
    most do) and starts typing means the question box: each printable key is sent on as `Typed`,
    and so is each key that deletes the box's text (`EDITING_KEYS`).

    The key is judged here, where Textual sends it because the log had the focus, and not by
    where the focus is when it is handled: the first key of a quick burst moves the focus to the
    question box while the rest are still on their way to the log."""

    @dataclass
    class Typed(Message):
        """A key typed on the log (or another part of the chat that takes no text) and meant for
        the question box: a character, or a key that edits the box's text."""

        key: str
        character: str | None
        """The character typed; None for an editing key (Backspace, Ctrl+U, …)."""

        @classmethod
        def of(cls, event: events.Key) -> ChatLog.Typed | None:
            """What `event` types into the question box, if it is meant for it."""
            if event.is_printable and event.character:
                return cls(event.key, event.character)
            if event.key in EDITING_KEYS:
                return cls(event.key, None)
            return None

    def on_key(self, event: events.Key) -> None:
        if (typed := self.Typed.of(event)) is not None:
            event.stop()
            event.prevent_default()
            self.post_message(typed)

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

    def greeting_only(self) -> bool:
        """Nothing but the greeting (and the suggested questions, `.welcome` both) is shown."""
        return all(child.has_class("welcome") for child in self.children)

    def _follow_if_overflowing(self) -> None:
        # Not while it holds only the greeting: at 80x24 beside the queue the chat opened
        # scrolled to the greeting's end, its first line "cannot.", the tail of a sentence.
        if self.greeting_only():
            if self.is_anchored:
                self.anchor(False)
        elif self.max_scroll_y > 0 and not self.is_anchored:
            self.anchor()
        elif self.max_scroll_y == 0 and self.is_anchored:
            self.anchor(False)
