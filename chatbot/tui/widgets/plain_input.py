"""A one-line field that never holds a control character, so what it shows is what it holds."""

from __future__ import annotations

from chatbot.text import strip_control
from chatbot.tui.widgets.one_line_input import OneLineInput


class PlainInput(OneLineInput):
    """A `OneLineInput` that drops control characters from whatever is typed, pasted or set.

    Textual draws a field's value as it is: an ESC pasted into it would reach the terminal. A
    field cannot spell the character out (its cursor counts characters), so it keeps none."""

    def validate_value(self, value: str) -> str:
        return strip_control(value, one_line=True)

    def replace(self, text: str, start: int, end: int) -> None:
        # Cleaned here as well, so the cursor lands after what was really inserted.
        super().replace(strip_control(text, one_line=True), start, end)
