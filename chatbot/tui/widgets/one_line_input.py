"""A one-line field that keeps every line of a paste."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


def joined_lines(text: str) -> str:
    """Pasted text for a one-line field: its lines joined by single spaces, blank lines and the
    spaces around each line dropped, so a paragraph copied from an email reads as one."""
    lines = text.splitlines()
    if len(lines) <= 1:
        return lines[0] if lines else ""
    return " ".join(stripped for line in lines if (stripped := line.strip()))


class OneLineInput(Input):
    """An `Input` whose paste keeps every line, joined by spaces.

    Textual's `Input` keeps only the first line of a paste and drops the rest without a word: a
    customer who pasted a question written over three lines sent its first line and never knew."""

    def _on_paste(self, event: events.Paste) -> None:
        # Textual runs the handler of every class in the MRO: stop `Input`'s from pasting again.
        event.prevent_default()
        text = joined_lines(event.text)
        if text:
            selection = self.selection
            if selection.is_empty:
                self.insert_text_at_cursor(text)
            else:
                self.replace(text, *selection)
        event.stop()
