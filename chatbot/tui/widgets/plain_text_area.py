"""A text box that never holds a control character other than newline and tab."""

from __future__ import annotations

from textual import events
from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult

from chatbot.text import strip_control
from chatbot.tui.widgets.plain_input import JOINERS, own_key_in_turn


class PlainTextArea(TextArea):
    """A `TextArea` that drops control characters from every edit and every loaded text.

    Textual draws the document as it is: an ESC pasted into it would reach the terminal. Every
    change to the document goes through `edit` or `load_text`, so cleaning there covers typing,
    pasting and undo alike."""

    def edit(self, edit: Edit) -> EditResult:
        edit.text = strip_control(edit.text)
        return super().edit(edit)

    def load_text(self, text: str) -> None:
        super().load_text(strip_control(text))

    async def _on_key(self, event: events.Key) -> None:
        if event.character in JOINERS and not self.read_only:
            event.prevent_default()  # `TextArea`'s own handler would drop it (see `JOINERS`).
            event.stop()
            start, end = self.selection
            self.replace(event.character, start, end, maintain_selection_offset=False)
        else:
            await own_key_in_turn(self, event)

    def take_typed(self, event: events.Key) -> None:
        """Take a character typed on a button beside this box (Tab from the box lands there),
        which would be lost without a word: it goes in at the cursor, with the focus. Called from
        the container the key reached, where it came because the button had the focus, not by
        where the focus is now: the first key of a burst moves it here while the rest are still
        on their way to the button. Space and Enter stay the button's; a read-only box (a
        deleted passage's last version) takes nothing."""
        if event.key == "space" or not (event.is_printable and event.character):
            return
        if self.read_only:
            return
        event.stop()
        event.prevent_default()
        self.focus()
        self.replace(event.character, *self.selection, maintain_selection_offset=False)
