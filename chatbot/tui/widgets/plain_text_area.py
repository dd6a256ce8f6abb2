"""A text box that never holds a control character other than newline and tab."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale
from chatbot.text import strip_control, undrawn
from chatbot.tui.localize import localize_bindings
from chatbot.tui.widgets.plain_input import JOINERS, move_focus_in_turn, own_key_in_turn


class PlainTextArea(TextArea):
    """A `TextArea` that drops control characters from every edit and every loaded text.

    Textual draws the document as it is: an ESC pasted into it would reach the terminal. Every
    change to the document goes through `edit` or `load_text`, so cleaning there covers typing,
    pasting and undo alike.

    A bidi override, embedding or isolate (U+202E) is kept, as the passage or list holds it, but
    drawn as nothing: sent to the terminal, it moved the box's border or (with bidi support)
    reversed the rest of the line. It is not spelled out (`\\u202e`) as `PlainInput` and the
    rest of the app show it: Textual's wrapping, cursor moves and mouse clicks in a text area
    each count a character as its own cells, and Rich counts these as none."""

    # Textual's `TextArea` binds Home and End to the line only: Ctrl+End did nothing, and the
    # words typed after it, meant for the end of the passage, went in mid-sentence.
    BINDINGS = [
        Binding("ctrl+home", "cursor_text_start", N_("Start of the text"), show=False),
        Binding("ctrl+end", "cursor_text_end", N_("End of the text"), show=False),
        Binding(
            "ctrl+shift+home",
            "cursor_text_start(True)",
            N_("Select to the start of the text"),
            show=False,
        ),
        Binding(
            "ctrl+shift+end",
            "cursor_text_end(True)",
            N_("Select to the end of the text"),
            show=False,
        ),
    ]

    def __init__(self, *args: Any, locale: Locale = DEFAULT_LOCALE, **kwargs: Any) -> None:
        """`TextArea`'s arguments; `locale`: the language of its keys' descriptions."""
        super().__init__(*args, **kwargs)
        localize_bindings(self, locale)

    _typed_aside = False
    """A character typed on a button beside the box went in (`take_typed`), and the focus has
    not left the box since: the keys typed in the same burst, queued to the button before the
    focus moved, come here after it, spaces and Enter included."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if all(undrawn(segment.text) == segment.text for segment in strip):
            return strip
        segments = [Segment(undrawn(s.text), s.style, s.control) for s in strip]
        return Strip(segments, strip.cell_length)

    def _on_resize(self) -> None:
        # Textual re-wraps the text on a resize but repaints only when the number of wrapped
        # lines changes. A box resized while its tab was hidden is painted as it comes back,
        # with the old width's lines (before this event arrives), cut at the new width: words
        # hidden until the next resize.
        super()._on_resize()
        self.refresh()

    def action_cursor_text_start(self, select: bool = False) -> None:
        """Move the cursor to the start of the text (with `select`, selecting up to there)."""
        if self._has_cursor:
            self.move_cursor((0, 0), select=select)
        else:
            self.scroll_home()

    def action_cursor_text_end(self, select: bool = False) -> None:
        """Move the cursor to the end of the text (with `select`, selecting up to there)."""
        if self._has_cursor:
            self.move_cursor(self.document.end, select=select)
        else:
            self.scroll_end()

    def edit(self, edit: Edit) -> EditResult:
        edit.text = strip_control(edit.text)
        return super().edit(edit)

    def load_text(self, text: str) -> None:
        super().load_text(strip_control(text))

    def _forward_event(self, event: events.Event) -> None:
        # How the app hands a key to the focused widget (`App.on_event`; Textual is pinned):
        # Tab and Shift+Tab move the focus before the keys typed behind them are handed on.
        if not move_focus_in_turn(self, event):
            super()._forward_event(event)

    async def _on_key(self, event: events.Key) -> None:
        if event.character in JOINERS and not self.read_only:
            event.prevent_default()  # `TextArea`'s own handler would drop it (see `JOINERS`).
            event.stop()
            start, end = self.selection
            self.replace(event.character, start, end, maintain_selection_offset=False)
        else:
            await own_key_in_turn(self, event)

    async def take_typed(self, event: events.Key) -> None:
        """Take a character typed on a button beside this box (Tab from the box lands there),
        which would be lost without a word: it goes in at the cursor, with the focus. A space
        too: a button binds only Enter, so the first space typed after Tab vanished and the
        words were saved glued (`collected.If the hold`). Called from the container the key
        reached, where it came because the button had the focus, not by where the focus is now:
        the first key of a burst moves it here while the rest are still on their way to the
        button, and those are all taken, in turn (`_typed_aside`). An Enter typed on the button
        before any character stays the button's (it presses it); a read-only box (a deleted
        passage's last version) takes nothing."""
        if self.read_only:
            return
        if self._typed_aside:
            await self._type_here(event)
            return
        if not (event.is_printable and event.character):
            return
        self._typed_aside = True
        event.stop()
        event.prevent_default()
        self.focus()
        self.replace(event.character, *self.selection, maintain_selection_offset=False)

    async def _type_here(self, event: events.Key) -> None:
        """`event`, typed on a button behind a character already put here, taken as this box
        takes a key typed in it. Left to the button, every space was lost (`Contact us` came out
        as `Contactus`: a button does nothing with one) and an Enter pressed it."""
        if event.key == "enter" or (event.is_printable and event.character):
            event.stop()
            event.prevent_default()
            text = "\n" if event.key == "enter" else event.character or ""
            self.replace(text, *self.selection, maintain_selection_offset=False)
        else:  # A joiner, or an editing key (Backspace, an arrow), in turn with the rest.
            await self._on_key(event)

    def _on_blur(self, event: events.Blur) -> None:
        # The burst is over once the focus leaves (Tab back to the buttons): an Enter typed on
        # a button then presses it again.
        self._typed_aside = False
