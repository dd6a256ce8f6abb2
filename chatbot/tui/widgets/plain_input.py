"""A one-line field that shows what it holds: no control character, and every line of a paste."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input

from chatbot.text import strip_control

JOINERS = frozenset("\u200c\u200d")
"""The zero-width non-joiner and joiner: Python counts them unprintable, so Textual's boxes
dropped them as they were typed, and 👨‍👩‍👧 came out as three faces and Persian or Hindi words lost
the joins they are written with."""


def joined_lines(text: str) -> str:
    """Pasted text for a one-line field: its lines joined by single spaces, blank lines and the
    spaces around each line dropped, so a paragraph copied from an email reads as one. A paste
    that starts with a space keeps one, to stay apart from the word it follows ("abc" then
    " My\nline" was "abcMy line"); the line break a copied line ends with is dropped."""
    lines = text.splitlines()
    if len(lines) <= 1:
        return lines[0] if lines else ""
    joined = " ".join(stripped for line in lines if (stripped := line.strip()))
    return " " + joined if joined and text[0].isspace() else joined


async def own_key_in_turn(widget: Widget, event: events.Key) -> bool:
    """Run `event`'s key now if it is one of `widget`'s own bindings; whether it was.

    A binding runs once its key has passed every widget up to the app, while a character is
    put in the box as its key arrives: keys typed in a burst (a slow link, the browser) came
    out of order, and `helmt` Backspace `et` gave `helmtet`. Taken here, each key
    acts in the order it was typed."""
    bindings = widget._bindings.key_to_bindings.get(event.key, ())
    if not bindings or not widget.check_action(bindings[0].action, ()):
        return False
    event.prevent_default()
    event.stop()
    await widget.run_action(bindings[0].action)
    return True


class PlainInput(Input):
    """An `Input` for everything people type in the app (a question, a reply, a search, a title).

    - It drops control characters and escape sequences from whatever is typed, pasted or set.
      Textual draws a field's value as it is, so an ESC pasted into it reached the terminal (a
      customer's paste of `\\x1b[2J` cleared their screen). A field cannot spell the character
      out (its cursor counts characters), so it keeps none; colour codes copied from a terminal
      leave their words behind.
    - A paste keeps every line, joined by spaces. Textual's `Input` keeps only the first line of
      a paste and drops the rest without a word: a question written over three lines went out
      as its first.
    - Ctrl+J submits, as Enter does (and as readline takes it): an Enter typed before the app
      had the terminal (in the same breath as the command) reaches it as a line feed, Ctrl+J,
      and the words typed with it stayed in the box, unsent."""

    BINDINGS = [Binding("ctrl+j", "submit", show=False)]

    def validate_value(self, value: str) -> str:
        return strip_control(value, one_line=True)

    def replace(self, text: str, start: int, end: int) -> None:
        # Cleaned here as well, so the cursor lands after what was really inserted.
        super().replace(strip_control(text, one_line=True), start, end)

    def append(self, text: str) -> None:
        """`text` added after what the box holds, the cursor after it: keys typed or text pasted
        on a part of the screen that takes none, and meant for this box."""
        self.cursor_position = len(self.value)
        self.insert_text_at_cursor(text)

    async def _on_key(self, event: events.Key) -> None:
        if event.character in JOINERS:
            event.prevent_default()  # `Input`'s own handler would drop it.
            event.stop()
            self._put(event.character)
        else:
            await own_key_in_turn(self, event)

    def _on_paste(self, event: events.Paste) -> None:
        # Textual runs the handler of every class in the MRO: stop `Input`'s from pasting again.
        event.prevent_default()
        self.paste(event.text)
        event.stop()

    def paste(self, text: str) -> None:
        """`text` as pasted: its lines joined, in place of the selection or at the cursor."""
        if joined := joined_lines(text):
            self._put(joined)

    def _put(self, text: str) -> None:
        """`text` in place of the selection, or at the cursor when nothing is selected."""
        selection = self.selection
        if selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *selection)
