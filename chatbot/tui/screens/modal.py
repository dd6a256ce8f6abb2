"""The base of the app's dialogs: a modal screen that closes once (their row of buttons is
`chatbot.tui.widgets.button_row.ButtonRow`)."""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.await_complete import AwaitComplete
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
