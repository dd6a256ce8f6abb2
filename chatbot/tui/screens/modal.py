"""The base of the app's dialogs: a modal screen that closes once, and the row of buttons they
end with."""

from __future__ import annotations

from fractions import Fraction
from typing import TypeVar

from textual import events
from textual.await_complete import AwaitComplete
from textual.containers import Container
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button

ResultT = TypeVar("ResultT")


class Dialog(ModalScreen[ResultT]):
    """A modal screen whose second dismiss does nothing. Two presses of Enter (or a dialog's key)
    in quick succession both reach the dialog before it has gone: the second dismiss ran the
    caller's callback again (a second claim, a second restore) and popped the screen beneath,
    which crashed the app when that was its last.

    Typing on it may go on to the screen beneath (`hand_on_typed`): its buttons are
    `DialogButton`s for that."""

    def dismiss(self, result: ResultT | None = None) -> AwaitComplete:
        if not self.is_active:
            return AwaitComplete()  # Already complete: there is nothing to wait for.
        return super().dismiss(result)

    def answer_typing(self) -> bool:
        """Close the dialog as typing on it answers it, if it does; whether it did. A dialog a
        key opens mid-sentence (Ctrl+B, Ctrl+S) answers with its safe choice: the words typed on
        go on to the field they were typed in (`hand_on_typed`). By default it does not: the
        dialog's own field takes them."""
        return False

    def hand_on_typed(self, event: events.Event) -> bool:
        """Whether `event` is typing (a printable character, or a paste) meant for the screen the
        dialog covers: if so it is handed on there, as the app hands a key to whatever has the
        focus, once the dialog has closed with its answer to typing (`answer_typing`). For the
        app's hand-on of each key (`_forward_event`), in the order typed: once the dialog is off
        the stack, the keys after it go to the field by themselves, and a key handled later
        (once it had passed the dialog's button) would have landed in the field after them."""
        return typing(event) and self.hand_on(event)

    def hand_on(self, event: events.Event) -> bool:
        """Close the dialog as typing answers it (`answer_typing`) and hand `event` on to what
        has the focus beneath; whether it did."""
        if not (self.is_active and self.answer_typing()):
            return False  # Not active: handed on already, the app no longer gives it keys.
        target = self.app.focused or self.app.screen  # The screen beneath's, the dialog gone.
        target._forward_event(event)
        return True

    def _forward_event(self, event: events.Event) -> None:
        # A key handed to the dialog itself (nothing on it has the focus).
        if not self.hand_on_typed(event):
            super()._forward_event(event)


def typing(event: events.Event) -> bool:
    """Whether `event` is typing: a printable character, or a paste."""
    if isinstance(event, events.Key):
        return bool(event.is_printable and event.character)
    return isinstance(event, events.Paste)


def handed_on(widget: Widget, event: events.Event) -> bool:
    """Whether `event`, which the app hands to `widget` of a dialog, went on past the dialog
    instead (`Dialog.hand_on_typed`): for a dialog's widgets' `_forward_event`."""
    screen = widget.screen
    return isinstance(screen, Dialog) and screen.hand_on_typed(event)


class DialogButton(Button):
    """A dialog's button: a character typed on it goes where the dialog says (`handed_on`)."""

    def _forward_event(self, event: events.Event) -> None:
        if not handed_on(self, event):
            super()._forward_event(event)


class ButtonRow(Container):
    """A dialog's buttons side by side, as many to a row as its width holds: the rest go on to
    the next row. One row cut the last button off in a narrow window (`Cancel (` at 60 columns,
    the quit dialog's), and Textual's layouts never wrap."""

    DEFAULT_CSS = """
    ButtonRow {
        layout: grid;
        grid-size: 1;
        grid-columns: auto;
        grid-rows: auto;
        grid-gutter: 0 1;
        height: auto;
    }
    ButtonRow > * {
        margin: 0;
    }
    """

    def on_resize(self, event: events.Resize) -> None:
        self.styles.grid_size_columns = self.columns_for(event.size.width)

    def on_mount(self) -> None:
        # Laid out in one column until the first resize says how wide the row is.
        self.styles.grid_size_columns = len(self.children) or 1

    def columns_for(self, width: int) -> int:
        """The most buttons to a row that fit in `width` cells (at least one)."""
        widths = [self._natural_width(child) for child in self.children if child.display]
        gap = self.styles.grid_gutter_vertical
        for count in range(len(widths), 1, -1):
            columns = [max(widths[column::count]) for column in range(count)]
            if sum(columns) + gap * (count - 1) <= width:
                return count
        return 1

    def _natural_width(self, widget: Widget) -> int:
        """The cells `widget` takes when nothing squeezes it, as the grid measures an auto
        column: its content, padding and border, within its min and max width."""
        viewport = self.app.size
        container = Size(max(self.size.width, 1), max(self.size.height, 1))
        width = widget.get_content_width(container, viewport) + widget.styles.gutter.width
        styles = widget.styles
        if styles.min_width is not None:
            width = max(width, int(styles.min_width.resolve(container, viewport, Fraction(width))))
        if styles.max_width is not None:
            width = min(width, int(styles.max_width.resolve(container, viewport, Fraction(width))))
        return width
